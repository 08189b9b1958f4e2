#include "ccbench/data_dir.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "ccbench/errors.hpp"

#ifndef CCBENCH_SOURCE_DIR
#error "CCBENCH_SOURCE_DIR is defined by model/CMakeLists.txt"
#endif

namespace ccbench {

std::filesystem::path own_folder() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe.parent_path();
}

DataDir data_dir() {
  DataDir d;
  if (const char* env = std::getenv("CCBENCH_DATA_DIR"); env != nullptr && *env != '\0') {
    const std::filesystem::path root{env};
    d.profiles = root / "profiles";
    d.suites = root / "suites";
    d.origin = fmt::format("CCBENCH_DATA_DIR ({})", root.string());
    return d;
  }
  const auto folder = own_folder();
  if (folder.filename() == "bin") {  // installed: PREFIX/bin beside PREFIX/share/ccbench
    const auto root = folder.parent_path() / "share" / "ccbench";
    d.profiles = root / "profiles";
    d.suites = root / "suites";
    d.origin = fmt::format("the install ({})", root.string());
    d.installed = true;
    return d;
  }
  const std::filesystem::path source{CCBENCH_SOURCE_DIR};
  d.profiles = source / "profiles";
  d.suites = source / "scripts" / "suites";
  d.origin = fmt::format("the source tree this build came from ({})", source.string());
  return d;
}

std::filesystem::path find_profile(const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (is_path) {
    return name_or_path;
  }
  if (name_or_path.empty()) {
    throw UsageError("--profile '': give a profile's name or its file");
  }
  const DataDir d = data_dir();
  std::error_code ec;
  if (!std::filesystem::is_directory(d.profiles, ec)) {
    throw UsageError(fmt::format(
        "--profile {}: {} is missing, so no profile can be found by name{}; give the profile's file instead",
        name_or_path, d.profiles.string(),
        d.installed ? " (was this install's share/ccbench moved away from its bin/?)" : ""));
  }
  auto path = d.profiles / (name_or_path + ".json");
  if (std::filesystem::is_regular_file(path, ec)) {
    return path;
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(d.profiles, ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  throw UsageError(fmt::format("--profile {}: no such profile in {} (there: {})", name_or_path, d.profiles.string(),
                               names.empty() ? std::string{"none"} : fmt::format("{}", fmt::join(names, ", "))));
}

}  // namespace ccbench
