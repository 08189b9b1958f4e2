#pragma once
// Reading result documents (DESIGN §5): parse, check against the schema in report/schema,
// convert to the model's ResultDocument. Every problem becomes one InputError line:
// "FILE: /json/pointer: what was expected"; nothing in here crashes on input (it is fuzzed).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/result.hpp"

namespace ccbench::report {

/// Malformed or foreign input (a result file, a profile): exit code 2.
class InputError : public UsageError {
 public:
  /// `pointer` is a JSON pointer ("/results/3/busbw_GBps"); empty for problems with the whole file.
  InputError(const std::string& file, const std::string& pointer, const std::string& message);
};

/// One result document as read from a file.
// NOLINTNEXTLINE(bugprone-exception-escape): holds nlohmann::json (in ResultDocument); not noexcept by contract
struct LoadedRun {
  std::string path;            // as given on the command line
  std::string schema_version;  // as written in the file ("1.0.0", "1.1.0")
  ResultDocument doc;
  /// How tables, plots and verdicts name this run: the run's label, else the file's stem.
  [[nodiscard]] std::string name() const;
};

/// The most bytes read from one input file unless --max-file-size raises it: a result document of
/// 1000 sizes with every raw sample kept is under 100 MiB.
inline constexpr std::uintmax_t kDefaultMaxFileBytes = std::uintmax_t{256} << 20;

/// The bytes of a regular file (a symlink to one is followed) of at most `max_bytes`. Anything else
/// (a named pipe, a device, a directory, a socket) or a larger file is refused (InputError) before a
/// byte is read, and a pipe never blocks. `what` names the file's role in messages ("result file").
std::string read_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view what);

/// Parses and checks one document. `name` is used in error messages (usually the path).
LoadedRun read_result_text(std::string_view text, const std::string& name);

/// Reads one file (throws InputError when it cannot be read or is malformed).
LoadedRun read_result_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kDefaultMaxFileBytes);

/// Takes each result of a file as it is read (with its index in /results), before the file's other parts:
/// the checks of the whole document come at its end, so a consumer must drop what it took when this throws.
using ResultHandler = std::function<void(CaseResult&& result, std::size_t index)>;

/// Streams one file: each result goes to `on_result` as it is read and is not kept; returns the document
/// without its results. Neither the file nor its JSON tree is ever held whole, so memory does not grow with
/// the results (a sweep of half a million pairs). The same checks and messages as read_result_file, but for
/// a row repeated (the consumer's to judge).
LoadedRun stream_result_file(const std::filesystem::path& path, std::uintmax_t max_bytes,
                             const ResultHandler& on_result);

/// The files the arguments name: each file as given, and each directory's *.json in name order.
/// Throws InputError for a directory without one (or that cannot be listed), UsageError for no file at all.
std::vector<std::filesystem::path> result_file_paths(const std::vector<std::string>& paths);

/// Reads each argument: a file, or a directory whose *.json files are read in name order.
/// Throws InputError on the first bad file, or when there is no file at all.
std::vector<LoadedRun> read_result_files(const std::vector<std::string>& paths,
                                         std::uintmax_t max_bytes = kDefaultMaxFileBytes);

}  // namespace ccbench::report
