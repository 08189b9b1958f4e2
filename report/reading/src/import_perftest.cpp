// perftest's ib_write_bw and ib_write_lat output read into ImportedTest. Units as perftest's source defines
// them: "MB/sec" and (since 1d202bb, 2024) "MiB/sec" are 2^20 B/s, "Gb/sec" (--report_gbits) 10^9 bit/s;
// latencies in usec are half a round trip, as ib_write_lat_bench reports them.
#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <regex>

#include "ccbench/report/input.hpp"
#include "import_logs.hpp"

namespace ccbench::report::detail {

namespace {

/// perftest's GID, 16 bytes in decimal ("00:00:...:255:255:10:10:11:12"), as an IPv6 address.
/// " local address: LID 0x02 QPN ..." / " remote address: LID 0000 ...": the LID (hex), when the line is one.
std::optional<int> address_lid(const std::string& line) {
  const auto at = line.find("address: LID ");
  if (at == std::string::npos ||
      (line.find("local address") == std::string::npos && line.find("remote address") == std::string::npos)) {
    return std::nullopt;
  }
  const std::string text = line.substr(at + 13, line.find(' ', at + 13) - (at + 13));
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 16);
  return end != text.c_str() && value >= 0 && value <= 0xffff ? std::optional<int>(static_cast<int>(value))
                                                              : std::nullopt;
}

std::string gid_text(const std::string& decimal) {
  std::vector<int> b;
  std::size_t pos = 0;
  while (pos <= decimal.size()) {
    const auto colon = decimal.find(':', pos);
    b.push_back(std::atoi(decimal.substr(pos, colon - pos).c_str()));
    if (colon == std::string::npos) {
      break;
    }
    pos = colon + 1;
  }
  if (b.size() != 16) {
    return decimal;
  }
  bool mapped = b[10] == 255 && b[11] == 255;
  for (std::size_t i = 0; i < 10; ++i) {
    mapped = mapped && b[i] == 0;
  }
  if (mapped) {
    return fmt::format("::ffff:{}.{}.{}.{}", b[12], b[13], b[14], b[15]);
  }
  std::string out;
  for (std::size_t i = 0; i < 16; i += 2) {
    out += fmt::format("{}{:x}", i == 0 ? "" : ":", b[i] * 256 + b[i + 1]);
  }
  return out;
}

class PerftestParser {
 public:
  explicit PerftestParser(const std::string& file) : m_file(file) {}

  std::vector<ImportedTest> parse(std::string_view text) {
    static const std::regex field_re(R"(([A-Za-z][A-Za-z0-9 ._-]*?)\s*:\s*(\S+))");
    static const std::regex gid_re(R"(^GID:\s*(\S+))");
    const auto lines = log_lines(text);
    ImportedTest t;
    t.file = m_file;
    t.tool = "perftest";
    t.format = "text";
    t.ranks = 2;
    RdmaInfo rdma;
    rdma.endpoints.resize(2);
    rdma.endpoints[1].rank = 1;
    std::vector<std::string> columns;
    bool closed = false;
    std::size_t gids = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      m_line = static_cast<int>(i) + 1;
      const auto& line = lines[i];
      std::smatch m;
      if (line.find("RDMA_Write") != std::string::npos && line.find("Test") != std::string::npos && !m_kind) {
        if (line.find("Bidirectional") != std::string::npos) {
          fail("a bidirectional run: its BW adds both directions, which ccbench's --bidirectional does not");
        }
        m_kind = line.find("Latency") != std::string::npos ? Collective::IbWriteLat : Collective::IbWriteBw;
      } else if (line.find("Test") != std::string::npos && !m_kind &&
                 (line.find("RDMA_Read") != std::string::npos || line.find("Send ") != std::string::npos ||
                  line.find("Atomic") != std::string::npos)) {
        fail(fmt::format("'{}': ccbench reads ib_write_bw and ib_write_lat only", line));
      } else if (regex_safe(line) && line.rfind("GID:", 0) == 0 && std::regex_search(line, m, gid_re)) {
        rdma.endpoints[std::min<std::size_t>(gids++, 1)].gid = gid_text(m[1].str());
      } else if (const auto lid = address_lid(line)) {  // InfiniBand names each end by its LID, not a GID
        rdma.endpoints[line.find("remote address") != std::string::npos ? 1 : 0].lid = *lid;
      } else if (line.rfind("#bytes", 0) == 0) {
        columns = tokens(line);
        m_unit = unit_of(line);
      } else if (!columns.empty() && !line.empty() && line[0] >= '0' && line[0] <= '9') {
        if (closed) {
          fail("a row after the table's closing line");
        }
        t.rows.push_back(row(line, columns));
      } else if (!t.rows.empty() && line.rfind("-----", 0) == 0) {
        closed = true;
      } else if (columns.empty() && regex_safe(line)) {
        for (auto it = std::sregex_iterator(line.begin(), line.end(), field_re); it != std::sregex_iterator(); ++it) {
          field((*it)[1].str(), (*it)[2].str(), rdma);
        }
      }
    }
    m_line = static_cast<int>(lines.size());
    if (!m_kind) {
      throw InputError(m_file, "", "not a perftest log: no 'RDMA_Write BW Test' or 'RDMA_Write Latency Test' line");
    }
    if (columns.empty() || t.rows.empty()) {
      fail("truncated: no result row");
    }
    check_header(rdma);
    if (!closed) {  // --run_infinitely prints a row every -D seconds until stopped; a killed run stops anywhere
      t.notes.push_back(fmt::format(
          "{}: truncated: the table ends after line {} without perftest's closing line of dashes (--run_infinitely, "
          "or a run stopped): its {} row(s) are kept, each a sample of its size",
          m_file, t.rows.back().line, t.rows.size()));
    }
    t.coll = *m_kind;
    rdma.endpoints[0].active_mtu = rdma.endpoints[1].active_mtu = rdma.mtu;
    rdma.endpoints[1].link_layer = rdma.endpoints[0].link_layer;
    rdma.endpoints[1].gid_type = rdma.endpoints[0].gid_type;
    rdma.endpoints[1].gid_index = rdma.endpoints[0].gid_index;
    t.rdma = std::move(rdma);
    t.notes.push_back(fmt::format("{}: the far side's device and both ports' rates are not in a perftest log", m_file));
    return {std::move(t)};
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(m_file, "", fmt::format("line {}: {}", m_line, what));
  }

  /// The header's figures as perftest prints them (a path MTU, at least one QP, ...): anything else is no
  /// perftest header.
  void check_header(RdmaInfo& rdma) const {
    const int mtu = rdma.mtu;
    if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096) {
      fail(fmt::format("the header's Mtu {} is not a path MTU (256 to 4096 bytes)", mtu));
    }
    if (rdma.qps < 1 || rdma.tx_depth < 1 || rdma.cq_mod < 1 || rdma.inline_bytes < 0) {
      fail(
          fmt::format("the header's Number of qps {}, TX depth {}, CQ Moderation {} or Max inline data {} is not "
                      "what perftest prints",
                      rdma.qps, rdma.tx_depth, rdma.cq_mod, rdma.inline_bytes));
    }
    if (rdma.endpoints[0].gid_index && *rdma.endpoints[0].gid_index < 0) {
      rdma.endpoints[0].gid_index.reset();
    }
  }

  /// Bytes per second of one unit of the BW columns.
  [[nodiscard]] double unit_of(const std::string& header) const {
    if (!m_kind || *m_kind == Collective::IbWriteLat) {
      return 0.0;
    }
    if (header.find("[MB/sec]") != std::string::npos || header.find("[MiB/sec]") != std::string::npos) {
      return 1048576.0;
    }
    if (header.find("[Gb/sec]") != std::string::npos) {
      return 1e9 / 8.0;
    }
    fail(fmt::format("unknown bandwidth unit in '{}'", header));
  }

  void field(const std::string& key, const std::string& value, RdmaInfo& rdma) const {
    const auto integer = [&] { return small_int(number(value.substr(0, value.find('[')))).value_or(-1); };
    auto& local = rdma.endpoints[0];
    if (key == "Device") {
      local.device = value;
    } else if (key == "Number of qps") {
      rdma.qps = integer();
    } else if (key == "Connection type") {
      if (value != "RC") {
        fail(fmt::format("connection type {}: ccbench's ib_write benches use RC", value));
      }
      rdma.transport = value;
    } else if (key == "TX depth") {
      rdma.tx_depth = integer();
    } else if (key == "CQ Moderation") {
      rdma.cq_mod = integer();
    } else if (key == "Mtu") {
      rdma.mtu = integer();
    } else if (key == "Max inline data") {
      rdma.inline_bytes = integer();
    } else if (key == "Link type") {
      local.link_layer = value == "IB" ? "InfiniBand" : value;
      local.gid_type = value == "Ethernet" ? "" : "IB";  // perftest does not say which RoCE
    } else if (key == "GID index") {
      local.gid_index = integer();
    }
  }

  [[nodiscard]] ImportedRow row(const std::string& line, const std::vector<std::string>& columns) const {
    const auto t = tokens(line);
    ImportedRow r;
    r.line = m_line;
    std::vector<double> v;
    for (const auto& s : t) {
      const auto n = number(s);
      if (!n) {
        fail(fmt::format("'{}' in a result row is not a number", s));
      }
      v.push_back(*n);
    }
    if (v.size() < 3) {
      fail(fmt::format("a result row of {} fields: '{}'", v.size(), line));
    }
    const auto bytes = whole(v[0]);
    const auto iterations = whole(v[1]);
    if (!bytes || !iterations || *bytes == 0) {
      fail(fmt::format("'{}': #bytes and #iterations must be whole numbers", line));
    }
    r.size_bytes = r.count = *bytes;
    r.iterations = *iterations;
    for (std::size_t i = 2; i < v.size(); ++i) {
      if (!(v[i] >= 0.0)) {
        fail(fmt::format("'{}': a negative figure", line));
      }
    }
    if (*m_kind == Collective::IbWriteBw) {
      if (v.size() != 5) {
        fail(fmt::format("an ib_write_bw row has 5 fields (bytes, iterations, BW peak, BW average, MsgRate): '{}'",
                         line));
      }
      if (!(v[3] > 0)) {
        fail("BW average is not positive");
      }
      r.time_s = static_cast<double>(r.size_bytes) / (v[3] * m_unit);
      r.bw_peak_GBps = v[2] * m_unit / 1e9;
      return r;
    }
    // ib_write_lat: t_min t_max t_typical [t_avg t_stdev 99% 99.9%], by the header's names
    std::map<std::string, double> by;
    std::size_t at = 2;
    for (std::size_t c = 2; c < columns.size() && at < v.size(); ++c) {
      const auto& name = columns[c];
      if (name.rfind("percentile", 0) == 0) {
        continue;  // "99%" "percentile[usec]": the value went with the first word
      }
      by[name.substr(0, name.find('['))] = v[at++] * 1e-6;
    }
    const auto get = [&by](const char* key) {
      const auto it = by.find(key);
      return it == by.end() ? std::nullopt : std::optional<double>(it->second);
    };
    if (at != v.size() || !get("t_typical") || !get("t_min") || !get("t_max") || !(*get("t_typical") > 0.0)) {
      fail(fmt::format("an ib_write_lat row that does not match its header: '{}'", line));
    }
    const double lo = *get("t_min");
    const double hi = *get("t_max");
    const double typical = *get("t_typical");
    if (!(lo <= typical && typical <= hi) || (get("t_avg") && !(lo <= *get("t_avg") && *get("t_avg") <= hi))) {
      fail(fmt::format("an ib_write_lat row whose t_min, t_typical, t_avg and t_max are out of order: '{}'", line));
    }
    Summary s;
    s.n = r.iterations;
    s.min = *get("t_min");
    s.max = *get("t_max");
    s.p50 = *get("t_typical");
    s.mean = get("t_avg").value_or(s.p50);
    s.stdev = get("t_stdev").value_or(0.0);
    s.p99 = get("99%").value_or(s.max);
    s.p999 = get("99.9%").value_or(s.max);
    s.p95 = s.p99;  // perftest does not print it: its 99th percentile stands in (never below the 95th)
    r.latency = s;
    r.time_s = s.p50;
    return r;
  }

  const std::string& m_file;
  std::optional<Collective> m_kind;
  double m_unit = 0.0;
  int m_line = 0;
};

}  // namespace

std::vector<ImportedTest> parse_perftest(std::string_view text, const std::string& file) {
  return PerftestParser(file).parse(text);
}

}  // namespace ccbench::report::detail
