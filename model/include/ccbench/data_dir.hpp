#pragma once
#include <filesystem>
#include <string>

namespace ccbench {

/// Where a program finds the data it does not embed (acceptance profiles, suites): an installed
/// program (one in a folder named bin) in ../share/ccbench beside that folder, wherever the install
/// was moved; a program in a build tree in the source tree it was built from; CCBENCH_DATA_DIR, when
/// set, for either. `profiles` and `suites` are the folders under it.
struct DataDir {
  std::filesystem::path profiles;
  std::filesystem::path suites;
  std::string origin;  // "the install (/opt/ccbench/share/ccbench)", "CCBENCH_DATA_DIR", "the source tree ..."
  bool installed = false;
};

/// The folder of the running program (/proc/self/exe), empty when it cannot be read.
[[nodiscard]] std::filesystem::path own_folder();

/// Where this program's data is; the folders are not checked (see find_profile).
[[nodiscard]] DataDir data_dir();

/// An acceptance profile named on the command line: a path (it holds a '/' or ends in .json) as it
/// is; otherwise NAME.json in data_dir().profiles. Throws UsageError naming what is missing: the
/// profiles folder (an install whose share/ccbench was moved away) or the name (and the names there).
[[nodiscard]] std::filesystem::path find_profile(const std::string& name_or_path);

}  // namespace ccbench
