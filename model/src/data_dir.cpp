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
namespace {

struct ProfilesDir {
  std::filesystem::path path;
  bool installed = false;
};

ProfilesDir profiles_dir() {
  if (const char* env = std::getenv("CCBENCH_DATA_DIR"); env != nullptr && *env != '\0') {
    return {std::filesystem::path{env} / "profiles", false};
  }
  std::error_code ec;
  const auto folder = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec && folder.filename() == "bin") {  // installed: PREFIX/bin beside PREFIX/share/ccbench
    return {folder.parent_path() / "share" / "ccbench" / "profiles", true};
  }
  return {std::filesystem::path{CCBENCH_SOURCE_DIR} / "profiles", false};
}

}  // namespace

std::filesystem::path find_profile(const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
  if (is_path) {
    return name_or_path;
  }
  if (name_or_path.empty()) {
    throw UsageError("--profile '': give a profile's name or its file");
  }
  const ProfilesDir d = profiles_dir();
  std::error_code ec;
  if (!std::filesystem::is_directory(d.path, ec)) {
    throw UsageError(fmt::format(
        "--profile {}: {} is missing, so no profile can be found by name{}; give the profile's file instead",
        name_or_path, d.path.string(),
        d.installed ? " (was this install's share/ccbench moved away from its bin/?)" : ""));
  }
  auto path = d.path / (name_or_path + ".json");
  if (std::filesystem::is_regular_file(path, ec)) {
    return path;
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(d.path, ec)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  throw UsageError(fmt::format("--profile {}: no such profile in {} (there: {})", name_or_path, d.path.string(),
                               names.empty() ? std::string{"none"} : fmt::format("{}", fmt::join(names, ", "))));
}

}  // namespace ccbench
