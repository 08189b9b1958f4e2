#include "ccbench/host_memory.hpp"

#include <algorithm>
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

std::optional<std::uint64_t> memory_stat_value(std::string_view stat, std::string_view key) {
  std::size_t at = 0;
  while (at < stat.size()) {
    const auto end = std::min(stat.find('\n', at), stat.size());
    const std::string_view line = stat.substr(at, end - at);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      return parse_u64(line.substr(key.size() + 1));
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> cgroup_room(std::string_view limit, std::string_view usage, std::uint64_t reclaimable) {
  constexpr std::uint64_t kNoLimitV1 = 1ULL << 62;  // v1 writes ~2^63 rounded to a page for "none"
  const auto max = parse_u64(limit);
  const auto used = parse_u64(usage);
  if (!max || !used || *max >= kNoLimitV1) {
    return std::nullopt;  // "max" (v2) does not parse: no limit
  }
  const std::uint64_t held = *used - std::min(reclaimable, *used);
  return *max > held ? *max - held : 0;
}

std::optional<std::uint64_t> cgroup_hierarchy_room(const std::string& root, std::string_view path,
                                                   const CgroupFiles& files) {
  std::optional<std::uint64_t> room;
  std::string dir = root + std::string(path);
  while (true) {
    const auto limit = read_text(dir + "/" + files.limit);
    const auto usage = read_text(dir + "/" + files.usage);
    if (limit && usage) {
      const auto stat = read_text(dir + "/memory.stat");
      const auto here = cgroup_room(*limit, *usage, stat ? memory_stat_value(*stat, files.reclaimable).value_or(0) : 0);
      if (here && (!room || *here < *room)) {
        room = here;
      }
    }
    if (dir.size() <= root.size()) {
      return room;
    }
    dir.resize(std::max(dir.rfind('/'), root.size()));  // the parent cgroup, up to the hierarchy's root
  }
}

std::optional<HostMemory> host_memory_available() {
  std::optional<HostMemory> out;
  if (const auto meminfo = read_text("/proc/meminfo")) {
    if (const auto bytes = meminfo_available(*meminfo)) {
      out = HostMemory{*bytes, "MemAvailable"};
    }
  }
  const std::string self = read_text("/proc/self/cgroup").value_or("");
  const std::optional<std::uint64_t> v2 = cgroup_hierarchy_room("/sys/fs/cgroup", cgroup_path(self, "").value_or(""),
                                                                {"memory.max", "memory.current", "inactive_file"});
  const std::optional<std::uint64_t> v1 =
      cgroup_hierarchy_room("/sys/fs/cgroup/memory", cgroup_path(self, "memory").value_or(""),
                            {"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"});
  for (const auto& [room, basis] :
       {std::pair{v2, "the memory cgroup's memory.max"}, std::pair{v1, "the memory cgroup's memory.limit_in_bytes"}}) {
    if (room && (!out || *room < out->available_bytes)) {
      out = HostMemory{*room, basis};
    }
  }
  return out;
}

}  // namespace ccbench
