#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "ccbench/version.hpp"

namespace ccbench {

std::string library_file_of(const void* symbol) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  const auto self = std::filesystem::canonical("/proc/self/exe", ec);
  auto file = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) {
    return info.dli_fname;
  }
  return file == self ? std::string{} : file.string();
}

std::string version_text(std::string_view program, const LibraryLines& libraries) {
  std::size_t width = 0;
  for (const auto& [name, text] : libraries) {
    width = std::max(width, name.size());
  }
  std::string out = fmt::format("{}: {}\n", program, version_string());
  for (const auto& [name, text] : libraries) {
    out += fmt::format("  {:<{}}  {}\n", name, width, text);
  }
  return out;
}

}  // namespace ccbench
