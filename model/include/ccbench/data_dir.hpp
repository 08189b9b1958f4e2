#pragma once
#include <filesystem>
#include <string>

namespace ccbench {

/// An acceptance profile named on the command line: a path (it holds a '/' or ends in .json) as it
/// is; otherwise NAME.json in the profiles folder of this program's data: CCBENCH_DATA_DIR/profiles when
/// set; for an installed program (one in a folder named bin) ../share/ccbench/profiles beside that
/// folder, wherever the install was moved; for a program in a build tree the source tree's profiles/.
/// Throws UsageError naming what is missing: the folder (an install whose share/ccbench was moved
/// away) or the name (and the names there).
[[nodiscard]] std::filesystem::path find_profile(const std::string& name_or_path);

}  // namespace ccbench
