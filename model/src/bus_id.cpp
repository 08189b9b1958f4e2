#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/topo/topology.hpp"

namespace ccbench::topo {
namespace {

bool all_hex(std::string_view text) {
  return !text.empty() &&
         std::ranges::all_of(text, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::string normalize_bus_id(std::string_view text) {
  // [domain:]bus:device.function in hex; NVML writes an 8-digit domain ("00000000:1B:00.0").
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) {
      break;
    }
    start = colon + 1;
  }
  if (parts.size() != 2 && parts.size() != 3) {
    return {};
  }
  auto domain = parts.size() == 3 ? parts[0] : std::string_view{"0000"};
  const auto bus = parts[parts.size() - 2];
  const auto devfn = parts.back();
  const auto dot = devfn.find('.');
  if (dot == std::string_view::npos) {
    return {};
  }
  const auto dev = devfn.substr(0, dot);
  const auto fn = devfn.substr(dot + 1);
  while (domain.size() > 4 && domain.front() == '0') {
    domain.remove_prefix(1);
  }
  if (!all_hex(domain) || domain.size() > 4 || !all_hex(bus) || bus.size() != 2 || !all_hex(dev) || dev.size() != 2 ||
      !all_hex(fn) || fn.size() != 1) {
    return {};
  }
  std::string out(4 - domain.size(), '0');
  out.append(domain).append(":").append(bus).append(":").append(dev).append(".").append(fn);
  std::ranges::transform(out, out.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace ccbench::topo
