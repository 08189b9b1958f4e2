#include "ccbench/host_memory.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

namespace ccbench {
namespace {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The cgroup path of `controller` ("" for v2's unified line "0::/path") in /proc/self/cgroup.
std::optional<std::string> cgroup_path(const std::string& self_cgroup, std::string_view controller) {
  std::istringstream lines(self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) {
      continue;
    }
    const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    if (controllers == controller) {
      return line.substr(second + 1);
    }
  }
  return std::nullopt;
}

// The room a cgroup hierarchy leaves: the cgroup's own files, else the hierarchy's root's.
std::optional<std::uint64_t> room_in(const std::string& root, const std::optional<std::string>& path,
                                     const char* limit_file, const char* usage_file) {
  for (const std::string& dir : {root + path.value_or(""), root}) {
    const auto limit = read_text(dir + "/" + limit_file);
    const auto usage = read_text(dir + "/" + usage_file);
    if (limit && usage) {
      return cgroup_room(*limit, *usage);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> meminfo_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const auto at = meminfo.find(kKey);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = meminfo.substr(at + kKey.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  const auto end = rest.find(' ');
  const auto kib = parse_u64(rest.substr(0, end));
  return kib ? std::optional(*kib * 1024) : std::nullopt;
}

std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage) {
  constexpr std::uint64_t kNoLimitV1 = 1ULL << 62;  // v1 writes ~2^63 rounded to a page for "none"
  const auto max = parse_u64(limit);
  const auto used = parse_u64(usage);
  if (!max || !used || *max >= kNoLimitV1) {
    return std::nullopt;  // "max" (v2) does not parse: no limit
  }
  return *max > *used ? *max - *used : 0;
}

std::optional<HostMemory> host_memory_available() {
  std::optional<HostMemory> out;
  if (const auto meminfo = read_text("/proc/meminfo")) {
    if (const auto bytes = meminfo_available(*meminfo)) {
      out = HostMemory{*bytes, "MemAvailable"};
    }
  }
  const std::string self = read_text("/proc/self/cgroup").value_or("");
  const std::optional<std::uint64_t> v2 =
      room_in("/sys/fs/cgroup", cgroup_path(self, ""), "memory.max", "memory.current");
  const std::optional<std::uint64_t> v1 =
      room_in("/sys/fs/cgroup/memory", cgroup_path(self, "memory"), "memory.limit_in_bytes", "memory.usage_in_bytes");
  for (const auto& [room, basis] :
       {std::pair{v2, "the memory cgroup's memory.max"}, std::pair{v1, "the memory cgroup's memory.limit_in_bytes"}}) {
    if (room && (!out || *room < out->available_bytes)) {
      out = HostMemory{*room, basis};
    }
  }
  return out;
}

}  // namespace ccbench
