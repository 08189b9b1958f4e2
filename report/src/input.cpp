#include "ccbench/report/input.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "ccbench/json_schema.hpp"
#include "ccbench/output_file.hpp"  // file_kind
#include "ccbench/report/rows.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/text.hpp"
#include "schema_json.hpp"

namespace ccbench::report {

namespace {

constexpr int kMaxNesting = 64;  // deeper documents are not ours

/// Closes a descriptor (none: -1) when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  explicit FileDescriptor(int descriptor) : fd(descriptor) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&&) = delete;
  FileDescriptor& operator=(FileDescriptor&&) = delete;
  ~FileDescriptor() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

std::string join_location(const std::string& file, const std::string& pointer, const std::string& message) {
  return pointer.empty() ? fmt::format("{}: {}", file, message) : fmt::format("{}: {}: {}", file, pointer, message);
}

struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;
};

std::optional<Version> parse_version(const std::string& text) {
  Version v;
  char dot1 = 0;
  char dot2 = 0;
  std::istringstream in(text);
  if (!(in >> v.major >> dot1 >> v.minor >> dot2 >> v.patch) || dot1 != '.' || dot2 != '.' || !in.eof() ||
      v.major < 0 || v.minor < 0 || v.patch < 0) {
    return std::nullopt;
  }
  return v;
}

const JsonSchema& result_schema() {
  static const JsonSchema schema(nlohmann::json::parse(detail::builtin_result_schema()));
  return schema;
}

nlohmann::json parse_json(std::string_view text, const std::string& name) {
  // The callback sees every nesting level while parsing; refusing deep nesting here keeps
  // everything after it (schema checks, dump) away from stack exhaustion.
  const nlohmann::json::parser_callback_t limit_depth = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxNesting) {
      throw InputError(name, "",
                       fmt::format("nested deeper than {} levels: not a ccbench result document", kMaxNesting));
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), limit_depth);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) {
      what = what.substr(at + 2);  // drop nlohmann's "[json.exception.parse_error.101] "
    }
    const bool truncated = e.byte >= text.size();
    throw InputError(name, "", fmt::format("not valid JSON{}: {}", truncated ? " (truncated?)" : "", printable(what)));
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond double's range: 1E99999
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) {
      what = what.substr(at + 2);
    }
    throw InputError(name, "", fmt::format("not valid JSON: {}", printable(what.substr(0, 120))));
  }
}

// The checks that come before the schema, so foreign or future documents get a message that says so.
void check_identity(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) {
    throw InputError(name, "", "expected a JSON object (a ccbench result document), got " + json_type_name(j));
  }
  if (!j.contains("schema") || j["schema"] != kSchemaName) {
    throw InputError(name, "/schema",
                     fmt::format("not a ccbench result document (expected \"{}\", got {})", kSchemaName,
                                 j.contains("schema") ? short_value(j["schema"]) : "no such key"));
  }
  const auto ours = parse_version(std::string(kSchemaVersion));
  const auto* version = j.contains("schema_version") ? &j["schema_version"] : nullptr;
  const auto theirs =
      version != nullptr && version->is_string() ? parse_version(version->get<std::string>()) : std::nullopt;
  if (!theirs) {
    throw InputError(name, "/schema_version",
                     fmt::format("expected a version \"MAJOR.MINOR.PATCH\", got {}",
                                 version != nullptr ? short_value(*version) : "no such key"));
  }
  if (theirs->major != ours->major) {
    throw InputError(name, "/schema_version",
                     fmt::format("schema version {} is not supported: this reader reads {}.x (up to {})",
                                 version->get<std::string>(), ours->major, kSchemaVersion));
  }
}

// A bench never writes two results for the same row; a document that does would make every
// comparison and check ambiguous.
void check_unique_rows(const LoadedRun& run, const std::string& name) {
  std::map<RowKey, std::size_t> seen;
  for (std::size_t i = 0; i < run.doc.results.size(); ++i) {
    const auto [it, added] = seen.emplace(key_of(run.doc.results[i]), i);
    if (!added) {
      throw InputError(
          name, fmt::format("/results/{}", i),
          fmt::format("repeats /results/{} (same op, dtype, group, size, placement and variant)", it->second));
    }
  }
}

}  // namespace

InputError::InputError(const std::string& file, const std::string& pointer, const std::string& message)
    : UsageError(join_location(printable(file), pointer, message)) {}

std::string LoadedRun::name() const {
  if (!doc.run.label.empty()) {
    return doc.run.label;
  }
  return std::filesystem::path(path).stem().string();
}

LoadedRun read_result_text(std::string_view text, const std::string& name) {
  const auto j = parse_json(text, name);
  check_identity(j, name);
  const auto version = j["schema_version"].get<std::string>();
  if (auto p = result_schema().first_problem(j)) {
    const auto ours = parse_version(std::string(kSchemaVersion));
    const auto theirs = parse_version(version);
    const bool newer = std::tie(theirs->minor, theirs->patch) > std::tie(ours->minor, ours->patch);
    throw InputError(name, printable(p->pointer),
                     p->message + (newer ? fmt::format(" (the file is schema {}, newer than this reader's {})", version,
                                                       kSchemaVersion)
                                         : ""));
  }
  if (j["results"].empty()) {
    throw InputError(name, "/results", "no results: the run recorded no case (did it stop before the first size?)");
  }
  LoadedRun run;
  run.path = name;
  run.schema_version = version;
  try {
    run.doc = document_from_json(j);
  } catch (const std::exception& e) {  // a gap between the schema and the model: still one line, never a crash
    throw InputError(name, "", fmt::format("does not fit the result model: {}", printable(e.what())));
  }
  check_unique_rows(run, name);
  return run;
}

std::string read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view what) {
  const auto name = path.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(name, "", fmt::format("cannot read: {}", std::strerror(errno)));
  }
  // Opened only once it is known to be a regular file, and without blocking should it be swapped meanwhile.
  const int fd = S_ISREG(st.st_mode) ? ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) : -1;
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    st.st_mode = 0;
  }
  const FileDescriptor file{fd};
  if (!S_ISREG(st.st_mode)) {
    throw InputError(name, "",
                     fmt::format("is {}, not a regular file: expected a {}", ccbench::file_kind(st.st_mode), what));
  }
  if (fd < 0) {
    throw InputError(name, "", fmt::format("cannot read: {}", std::strerror(errno)));
  }
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > max_bytes) {
    throw InputError(name, "",
                     fmt::format("{} bytes: larger than the limit of {} per input file (raise it with --max-file-size)",
                                 size, format_size(max_bytes, SizeStyle::Short)));
  }
  std::string text(size, '\0');
  std::size_t done = 0;
  while (done < text.size()) {  // a file that shrinks as it is read ends early; one that grows is cut
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw InputError(name, "", fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (n == 0) {
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

LoadedRun read_result_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  const auto name = path.string();
  const std::string text = read_input_file(path, max_bytes, "result file (.json)");
  if (text.empty()) {
    throw InputError(name, "", "empty file, expected a ccbench result document");
  }
  return read_result_text(text, name);
}

std::vector<LoadedRun> read_result_files(const std::vector<std::string>& paths, std::uintmax_t max_bytes) {
  std::vector<LoadedRun> runs;
  for (const auto& arg : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      runs.push_back(read_result_file(arg, max_bytes));
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
      if (entry.path().extension() == ".json" && !entry.is_directory()) {
        files.push_back(entry.path());
      }
    }
    if (ec) {
      throw InputError(arg, "", "cannot list the directory: " + ec.message());
    }
    if (files.empty()) {
      throw InputError(arg, "", "directory holds no result file (*.json)");
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      runs.push_back(read_result_file(f, max_bytes));
    }
  }
  if (runs.empty()) {
    throw UsageError("no result file given");
  }
  return runs;
}

}  // namespace ccbench::report
