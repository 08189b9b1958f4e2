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
#include <system_error>
#include <tuple>
#include <utility>

#include "ccbench/json_schema.hpp"
#include "ccbench/output_file.hpp"  // file_kind
#include "ccbench/report/rows.hpp"
#include "ccbench/result_json.hpp"
#include "ccbench/text.hpp"
#include "file_bytes.hpp"
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

/// What a streamed parse leaves: the document without its results (each was handed over as it was read),
/// and the first problem among the results, kept until the document's own checks have spoken.
// NOLINTNEXTLINE(bugprone-exception-escape): holds nlohmann::json; not noexcept by contract (as LoadedRun)
struct Streamed {
  nlohmann::json rest;
  std::size_t results = 0;
  std::optional<SchemaProblem> result_problem;  // a result that does not fit the schema
  std::string model_problem;                    // one that fits it but not the model (a gap between the two)
};

std::string without_nlohmann_prefix(std::string what) {
  if (const auto at = what.find("] "); at != std::string::npos) {
    what = what.substr(at + 2);  // drop nlohmann's "[json.exception.parse_error.101] "
  }
  return what;
}

/// Parses [first, last) holding only the document without its results: each element of /results is checked
/// against the schema's result, converted and handed to `on_result` as soon as it is read, then dropped.
/// Refuses deep nesting as it parses, so nothing after it (schema checks, dump) can exhaust the stack.
template <typename Iterator>
Streamed parse_streamed(Iterator first, Iterator last, std::uint64_t total_bytes, const std::string& name,
                        const ResultHandler& on_result) {
  Streamed out;
  bool results_key = false;
  bool in_results = false;
  const nlohmann::json::parser_callback_t callback = [&](int depth, nlohmann::json::parse_event_t event,
                                                         nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (depth > kMaxNesting) {
      throw InputError(name, "",
                       fmt::format("nested deeper than {} levels: not a ccbench result document", kMaxNesting));
    }
    if (depth == 1 && event == Event::key) {
      results_key = parsed == "results";
    } else if (depth == 1 && event == Event::array_start) {
      in_results = results_key;
    } else if (depth == 1 && event == Event::array_end) {
      in_results = false;
    } else if (depth == 2 && in_results && (event == Event::object_end || event == Event::value)) {
      const std::size_t index = out.results++;
      if (out.result_problem || !out.model_problem.empty()) {
        return false;  // the file is refused at the end: nothing more is handed over
      }
      out.result_problem =
          result_schema().first_problem_in(parsed, "#/$defs/result", fmt::format("/results/{}", index));
      if (!out.result_problem) {
        try {
          on_result(case_from_json(parsed), index);
        } catch (const InputError&) {
          throw;
        } catch (const std::exception& e) {
          out.model_problem = printable(e.what());
        }
      }
      return false;
    }
    return true;
  };
  try {
    out.rest = nlohmann::json::parse(first, last, callback);
  } catch (const nlohmann::json::parse_error& e) {
    const bool truncated = e.byte >= total_bytes;
    throw InputError(name, "",
                     fmt::format("not valid JSON{}: {}", truncated ? " (truncated?)" : "",
                                 printable(without_nlohmann_prefix(e.what()))));
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond double's range: 1E99999
    throw InputError(name, "",
                     fmt::format("not valid JSON: {}", printable(without_nlohmann_prefix(e.what()).substr(0, 120))));
  }
  return out;
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
  if (std::tie(theirs->minor, theirs->patch) > std::tie(ours->minor, ours->patch)) {
    throw InputError(name, "/schema_version",
                     fmt::format("schema version {} is newer than this reader's {}: read it with the ccbench-report "
                                 "of the ccbench that wrote it, or a newer one",
                                 version->get<std::string>(), kSchemaVersion));
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

namespace {

/// The first key of a JSON pointer ("/run/argv" -> "run"; "" for the root).
std::string top_key(const std::string& pointer) {
  const auto next = pointer.find('/', 1);
  return pointer.empty() ? std::string{} : pointer.substr(1, next == std::string::npos ? next : next - 1);
}

/// The checks of a streamed document, in the order a whole document's would meet them: identity, then the
/// schema (the document's keys in order, its results among them), then the model, then non-empty results.
LoadedRun checked(Streamed streamed, const std::string& name) {
  const auto& j = streamed.rest;
  check_identity(j, name);
  const auto version = j["schema_version"].get<std::string>();
  auto problem = result_schema().first_problem(j);
  if (streamed.result_problem && (!problem || (!problem->pointer.empty() && top_key(problem->pointer) > "results"))) {
    problem = streamed.result_problem;
  }
  if (problem) {
    throw InputError(name, printable(problem->pointer), problem->message);
  }
  if (!streamed.model_problem.empty()) {
    throw InputError(name, "", fmt::format("does not fit the result model: {}", streamed.model_problem));
  }
  if (streamed.results == 0) {
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
  return run;
}

LoadedRun whole(Streamed streamed, std::vector<CaseResult> results, const std::string& name) {
  LoadedRun run = checked(std::move(streamed), name);
  run.doc.results = std::move(results);
  check_unique_rows(run, name);
  return run;
}

}  // namespace

LoadedRun read_result_text(std::string_view text, const std::string& name) {
  std::vector<CaseResult> results;
  auto streamed = parse_streamed(text.begin(), text.end(), text.size(), name,
                                 [&](CaseResult&& r, std::size_t) { results.push_back(std::move(r)); });
  return whole(std::move(streamed), std::move(results), name);
}

namespace {

/// Opens `path` for reading when it is a regular file (a symlink to one is followed) of at most `max_bytes`;
/// anything else is refused before a byte is read, and a pipe never blocks. Returns the descriptor and the size.
std::pair<int, std::uintmax_t> open_input(const std::filesystem::path& path, std::uintmax_t max_bytes,
                                          std::string_view what) {
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
  FileDescriptor file{fd};
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
  return {std::exchange(file.fd, -1), size};
}

}  // namespace

std::string read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view what) {
  const auto name = path.string();
  const auto [fd, size] = open_input(path, max_bytes, what);
  const FileDescriptor file{fd};
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

LoadedRun stream_result_file(const std::filesystem::path& path, std::uintmax_t max_bytes,
                             const ResultHandler& on_result) {
  const auto name = path.string();
  const auto [fd, size] = open_input(path, max_bytes, "result file (.json)");
  const FileDescriptor file{fd};
  if (size == 0) {
    throw InputError(name, "", "empty file, expected a ccbench result document");
  }
  detail::FileBytes bytes(fd);
  try {
    return checked(parse_streamed(bytes.begin(), detail::FileBytes::end(), size, name, on_result), name);
  } catch (const std::system_error& e) {
    throw InputError(name, "", fmt::format("cannot read: {}", e.code().message()));
  }
}

LoadedRun read_result_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::vector<CaseResult> results;
  LoadedRun run =
      stream_result_file(path, max_bytes, [&](CaseResult&& r, std::size_t) { results.push_back(std::move(r)); });
  run.doc.results = std::move(results);
  check_unique_rows(run, run.path);
  return run;
}

std::vector<std::filesystem::path> result_file_paths(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> out;
  for (const auto& arg : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      out.emplace_back(arg);
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
    out.insert(out.end(), files.begin(), files.end());
  }
  if (out.empty()) {
    throw UsageError("no result file given");
  }
  return out;
}

std::vector<LoadedRun> read_result_files(const std::vector<std::string>& paths, std::uintmax_t max_bytes) {
  std::vector<LoadedRun> runs;
  for (const auto& path : result_file_paths(paths)) {
    runs.push_back(read_result_file(path, max_bytes));
  }
  return runs;
}

}  // namespace ccbench::report
