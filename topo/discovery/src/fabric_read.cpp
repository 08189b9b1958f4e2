#include "ccbench/topo/fabric_read.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "ccbench/topo/discover.hpp"
#include "sysfs.hpp"

namespace ccbench::topo {

namespace fs = std::filesystem;

namespace {

/// A counter file's value: a whole number on its first line; unset otherwise.
std::optional<std::uint64_t> read_count(const fs::path& file) {
  const auto line = detail::read_line(file);
  if (!line) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  const char* begin = line->data();
  const char* end = begin + line->size();
  while (begin < end && *begin == ' ') {
    ++begin;
  }
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc{} || ptr == begin) {
    return std::nullopt;
  }
  return value;
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Every counter file of `dir` (skipping `skip`), as readings of `source`; the ones not read are one problem.
void read_dir(const fs::path& dir, const std::string& source, const std::string& device, int port,
              std::vector<std::string_view> skip, CounterSnapshot& out) {
  std::vector<std::string> unread;
  for (const auto& file : entries(dir)) {
    const std::string name = file.filename().string();
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) {
      continue;
    }
    if (const auto value = read_count(file)) {
      out.readings.push_back({source, device, port, name, *value});
    } else {
      unread.push_back(name);
    }
  }
  if (!unread.empty()) {
    out.problems.push_back(fmt::format("{}: {} counter file(s) not read ({}{})", dir.string(), unread.size(),
                                       unread.front(), unread.size() > 1 ? ", ..." : ""));
  }
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The ethtool statistics of one network device through SIOCETHTOOL, as `ethtool -S` asks them; empty when
/// the driver has none (lo), `problem` set when asking failed otherwise.
std::vector<std::pair<std::string, std::uint64_t>> ask_ethtool(const std::string& device, std::string& problem) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  if (device.size() >= IFNAMSIZ) {
    return out;
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    problem = fmt::format("ethtool {}: socket: {}", device, std::strerror(errno));
    return out;
  }
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, device.c_str(), device.size() + 1);
  const auto ask = [&](void* data) {
    ifr.ifr_data = static_cast<char*>(data);
    return ::ioctl(fd, SIOCETHTOOL, &ifr) == 0;
  };
  // ethtool_sset_info ends in a flexible array: one count for the one set asked.
  std::array<std::uint32_t, (sizeof(ethtool_sset_info) / sizeof(std::uint32_t)) + 1> sset_buf{};
  auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf.data());  // NOLINT(*-reinterpret-cast)
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = 1ULL << ETH_SS_STATS;
  std::uint32_t count = 0;
  if (ask(sset) && sset->sset_mask != 0) {
    count = sset_buf.back();
  }
  if (count > 0 && count < 100000) {
    std::vector<std::uint8_t> strings(sizeof(ethtool_gstrings) + std::size_t{count} * ETH_GSTRING_LEN);
    auto* gs = reinterpret_cast<ethtool_gstrings*>(strings.data());  // NOLINT(*-reinterpret-cast)
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_STATS;
    gs->len = count;
    std::vector<std::uint64_t> stats_buf((sizeof(struct ethtool_stats) / sizeof(std::uint64_t)) + count);
    auto* st = reinterpret_cast<struct ethtool_stats*>(stats_buf.data());  // NOLINT(*-reinterpret-cast)
    st->cmd = ETHTOOL_GSTATS;
    st->n_stats = count;
    if (ask(gs) && ask(st) && gs->len == count && st->n_stats == count) {
      const std::size_t first = sizeof(struct ethtool_stats) / sizeof(std::uint64_t);
      for (std::uint32_t i = 0; i < count; ++i) {
        const auto* name = reinterpret_cast<const char*>(gs->data + std::size_t{i} * ETH_GSTRING_LEN);  // NOLINT
        out.emplace_back(std::string(name, strnlen(name, ETH_GSTRING_LEN)), stats_buf[first + i]);
      }
    } else {
      problem = fmt::format("ethtool {}: statistics not read: {}", device, std::strerror(errno));
    }
  }
  ::close(fd);
  return out;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<std::pair<std::string, std::uint64_t>> parse_ethtool_text(std::string_view text) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.rfind(':');
    if (colon == std::string::npos || line.find_first_not_of(' ') == std::string::npos) {
      continue;
    }
    const auto first = line.find_first_not_of(" \t");
    std::string name = line.substr(first, colon - first);
    std::string_view value(line);
    value.remove_prefix(colon + 1);
    while (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    std::uint64_t number = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec == std::errc{} && ptr != value.data() && !name.empty()) {
      out.emplace_back(std::move(name), number);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::uint64_t>> parse_snmp_table(std::string_view text, std::string_view table) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  const std::string prefix = std::string(table) + ":";
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    if (!line.starts_with(prefix)) {
      continue;
    }
    std::istringstream words(line.substr(prefix.size()));
    std::vector<std::string> fields;
    for (std::string w; words >> w;) {
      fields.push_back(w);
    }
    if (names.empty()) {
      names = std::move(fields);  // the first line names the fields, the second holds their values
      continue;
    }
    for (std::size_t i = 0; i < names.size() && i < fields.size(); ++i) {
      std::uint64_t value = 0;
      const auto& f = fields[i];
      const auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), value);
      if (ec == std::errc{} && ptr == f.data() + f.size()) {
        out.emplace_back(names[i], value);
      }
    }
    break;
  }
  return out;
}

double parse_link_speed(std::string_view text) {
  double gts = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), gts);
  return ec == std::errc{} && ptr != text.data() && std::string_view(ptr).starts_with(" GT/s") ? gts : 0.0;
}

CounterSnapshot read_counters(const FabricRoots& roots) {
  CounterSnapshot out;
  out.taken_s = seconds_now();
  for (const auto& dev : entries(roots.sys / "class/infiniband")) {
    const std::string device = dev.filename().string();
    for (const auto& port_dir : entries(dev / "ports")) {
      int port = 0;
      const std::string p = port_dir.filename().string();
      std::from_chars(p.data(), p.data() + p.size(), port);
      read_dir(port_dir / "counters", "rdma", device, port, {}, out);
      read_dir(port_dir / "hw_counters", "rdma_hw", device, port, {"lifespan"}, out);  // lifespan: a setting
    }
  }
  for (const auto& dev : entries(roots.sys / "class/net")) {
    const std::string device = dev.filename().string();
    read_dir(dev / "statistics", "net", device, 0, {}, out);
    if (const auto changes = read_count(dev / "carrier_changes")) {
      out.readings.push_back({"net", device, 0, "carrier_changes", *changes});
    }
    if (roots.ethtool && device != "lo") {
      std::string problem;
      for (auto& [name, value] : ask_ethtool(device, problem)) {
        out.readings.push_back({"ethtool", device, 0, std::move(name), value});
      }
      if (!problem.empty()) {
        out.problems.push_back(std::move(problem));
      }
    }
  }
  // Tcp's gauges (CurrEstab) and constants (RtoMin, MaxConn) are no counters: its counters by name.
  constexpr std::array kTcp{"ActiveOpens", "PassiveOpens", "AttemptFails", "EstabResets", "InSegs",
                            "OutSegs",     "RetransSegs",  "InErrs",       "OutRsts",     "InCsumErrors"};
  const std::string snmp = read_text(roots.proc / "net/snmp");
  for (auto& [name, value] : parse_snmp_table(snmp, "Tcp")) {
    if (std::find(kTcp.begin(), kTcp.end(), name) != kTcp.end()) {
      out.readings.push_back({"tcp", "", 0, std::move(name), value});
    }
  }
  for (auto& [name, value] : parse_snmp_table(read_text(roots.proc / "net/netstat"), "TcpExt")) {
    out.readings.push_back({"tcp", "", 0, std::move(name), value});
  }
  if (snmp.empty()) {
    out.problems.push_back(fmt::format("{}: not read: no TCP counters", (roots.proc / "net/snmp").string()));
  }
  if (!roots.nvml_library.empty()) {
    for (auto& r : query_nvlink_errors(roots.nvml_library).readings) {
      out.readings.push_back(std::move(r));
    }
  }
  return out;
}

namespace {

/// The PCI device directory of a class device (/sys/class/net/X/device, /sys/class/infiniband/X/device):
/// the link's target, or its nearest parent named like a PCI address (virtio's device is a child of one).
std::optional<fs::path> pci_dir_of(const fs::path& device_link) {
  std::error_code ec;
  fs::path dir = fs::canonical(device_link, ec);
  if (ec) {
    return std::nullopt;
  }
  const auto is_bdf = [](const std::string& name) {
    return name.size() == 12 && name[4] == ':' && name[7] == ':' && name[10] == '.';
  };
  while (!dir.empty() && dir != dir.root_path()) {
    if (is_bdf(dir.filename().string())) {
      return dir;
    }
    dir = dir.parent_path();
  }
  return std::nullopt;
}

}  // namespace

std::optional<LinkState> read_pcie_link(const fs::path& dir, const std::string& role) {
  const auto speed = detail::read_line(dir / "current_link_speed");
  const auto width = detail::read_line(dir / "current_link_width");
  if (!speed || !width) {
    return std::nullopt;
  }
  const auto max_speed = detail::read_line(dir / "max_link_speed").value_or("");
  const auto max_width = detail::read_line(dir / "max_link_width").value_or("");
  LinkState l;
  l.kind = "pcie";
  l.device = dir.filename().string();
  l.role = role;
  const auto id = [&dir](const char* file) {
    const std::string text = detail::read_line(dir / file).value_or("");
    return text.starts_with("0x") ? text.substr(2) : text;
  };
  if (const std::string vendor = id("vendor"), device = id("device"); !vendor.empty() && !device.empty()) {
    l.model = vendor + ":" + device;
  }
  const auto pretty = [](const std::string& s, const std::string& w) { return fmt::format("{} x{}", s, w); };
  l.current = pretty(*speed, *width);
  if (!max_speed.empty() && !max_width.empty()) {
    l.capable = pretty(max_speed, max_width);
    const double now = parse_link_speed(*speed);
    const double max = parse_link_speed(max_speed);
    const bool narrow = std::atoi(width->c_str()) < std::atoi(max_width.c_str());
    // A GPU lowers its link speed when idle: only its width says the slot trained low.
    const bool slow = role != "gpu" && now > 0 && max > 0 && now < max;
    l.below = narrow || slow;
  }
  for (const char* file : {"aer_dev_correctable", "aer_dev_fatal", "aer_dev_nonfatal"}) {
    std::ifstream in(dir / file);
    std::string name;
    std::uint64_t value = 0;
    while (in >> name >> value) {
      if (name.starts_with("TOTAL_")) {
        l.aer[name] = value;
      }
    }
  }
  return l;
}

namespace {

/// "400 Gb/sec (4X NDR)" -> 400; 0 when not a rate.
double rate_gbps(const std::string& rate) { return std::atof(rate.c_str()); }

}  // namespace

std::vector<LinkState> read_links(const FabricRoots& roots) {
  std::vector<LinkState> out;
  std::vector<fs::path> nic_pci;
  struct Port {
    LinkState link;
    std::string model;  // hca_type and link layer: the ports that share a capability
  };
  std::vector<Port> ports;
  for (const auto& dev : entries(roots.sys / "class/infiniband")) {
    const std::string device = dev.filename().string();
    const std::string firmware = detail::read_line(dev / "fw_ver").value_or("");
    const std::string hca = detail::read_line(dev / "hca_type").value_or(device.substr(0, device.find('_')));
    for (const auto& port_dir : entries(dev / "ports")) {
      Port p;
      p.link.kind = "rdma_port";
      p.link.device = fmt::format("{} port {}", device, port_dir.filename().string());
      p.link.role = "hca";
      p.link.model = hca;
      p.link.current = detail::read_line(port_dir / "rate").value_or("");
      p.link.state = detail::read_line(port_dir / "state").value_or("");
      p.link.firmware = firmware;
      p.model = hca + " " + detail::read_line(port_dir / "link_layer").value_or("");
      ports.push_back(std::move(p));
    }
    if (auto pci = pci_dir_of(dev / "device")) {
      nic_pci.push_back(*pci);
    }
  }
  // An active port's capability: the best rate the active ports of its model reach on this host.
  std::map<std::string, const Port*> best;
  for (const auto& p : ports) {
    if (p.link.state.find("ACTIVE") == std::string::npos) {
      continue;
    }
    auto& b = best[p.model];
    if (b == nullptr || rate_gbps(p.link.current) > rate_gbps(b->link.current)) {
      b = &p;
    }
  }
  for (auto& p : ports) {
    const auto b = best.find(p.model);
    const bool active = p.link.state.find("ACTIVE") != std::string::npos;
    if (b != best.end()) {
      p.link.capable = b->second->link.current;
    }
    // A port that is not ACTIVE (DOWN, INIT, ARMED, or no state read) carries nothing: it is below what it can do.
    p.link.below = !active || (b != best.end() && rate_gbps(p.link.current) < rate_gbps(p.link.capable));
    out.push_back(p.link);
  }
  for (const auto& dev : entries(roots.sys / "class/net")) {
    if (auto pci = pci_dir_of(dev / "device")) {
      nic_pci.push_back(*pci);
    }
  }
  std::sort(nic_pci.begin(), nic_pci.end());
  nic_pci.erase(std::unique(nic_pci.begin(), nic_pci.end()), nic_pci.end());
  for (const auto& dir : nic_pci) {
    if (auto l = read_pcie_link(dir, "nic")) {
      out.push_back(std::move(*l));
    }
  }
  for (const auto& dir : entries(roots.sys / "bus/pci/devices")) {
    const auto vendor = detail::read_line(dir / "vendor");
    const auto cls = detail::read_line(dir / "class");
    // NVIDIA (0x10de) display or 3D controllers: the GPUs (NVSwitches are bridges, class 0x0680).
    if (vendor == "0x10de" && cls && (cls->starts_with("0x0300") || cls->starts_with("0x0302"))) {
      if (auto l = read_pcie_link(dir, "gpu")) {
        out.push_back(std::move(*l));
      }
    }
  }
  if (!roots.nvml_library.empty()) {
    for (auto& l : nvlink_states(query_nvml(roots.nvml_library).gpus)) {
      out.push_back(std::move(l));
    }
  }
  return out;
}

std::vector<LinkState> nvlink_states(const std::vector<Gpu>& gpus) {
  const auto active = [](const Gpu& g) {
    return static_cast<std::size_t>(
        std::count_if(g.nvlinks.begin(), g.nvlinks.end(), [](const NvLink& l) { return l.active; }));
  };
  std::map<std::string, std::size_t> best;  // by GPU name: the most links active
  for (const auto& g : gpus) {
    best[g.name] = std::max(best[g.name], active(g));
  }
  std::vector<LinkState> out;
  for (const auto& g : gpus) {
    if (g.nvlinks.empty()) {
      continue;  // no NVLink (PCIe boards without a bridge)
    }
    LinkState l;
    l.kind = "nvlink";
    l.device = fmt::format("GPU{} {} NVLinks", g.index, g.bus_id);
    l.role = "gpu";
    l.model = g.name;
    l.current = fmt::format("{} of {} active", active(g), g.nvlinks.size());
    l.capable = fmt::format("{} active", best[g.name]);
    l.below = active(g) < best[g.name];
    std::vector<std::string> down;
    for (const auto& link : g.nvlinks) {
      if (!link.active) {
        down.push_back(std::to_string(link.index));
      }
    }
    l.state = down.empty() ? "all active" : fmt::format("down: {}", fmt::join(down, ", "));
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace ccbench::topo
