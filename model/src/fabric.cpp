#include "ccbench/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>

namespace ccbench {

namespace {

struct Known {
  std::string_view source;
  std::string_view name;
  CounterInfo info;
};

constexpr CounterKind kError = CounterKind::Error;
constexpr CounterKind kCongestion = CounterKind::Congestion;
constexpr CounterKind kTraffic = CounterKind::Traffic;

// InfiniBand PortCounters (IBA 16.1.3.5; the kernel's struct ib_pma_portcounters): the error counters are 4, 8
// or 16 bits and stop at all ones; the data and packet counters are 32 bits there (64 in PortCountersExtended,
// which sysfs reads where the HCA has it). port_xmit_data and port_rcv_data count 4-byte words.
// hw_counters are the driver's (mlx5's RoCE and transport counters; rxe's own set).
constexpr std::array kKnown{
    Known{"rdma", "symbol_error", {kError, "symbol errors on the physical link: a bad cable, transceiver or port", 16}},
    Known{"rdma", "link_error_recovery", {kError, "the link retrained after errors (link error recovery)", 8}},
    Known{"rdma", "link_downed", {kError, "the link went down: its error recovery failed", 8}},
    Known{"rdma", "port_rcv_errors", {kError, "packets received with errors (bad CRC, length, VL)", 16}},
    Known{"rdma", "port_rcv_remote_physical_errors", {kError, "packets received marked bad upstream (EBP)", 16}},
    Known{"rdma", "port_rcv_switch_relay_errors", {kError, "packets the switch port could not relay", 16}},
    Known{"rdma", "port_xmit_discards", {kError, "outbound packets discarded (the port down, or congestion)", 16}},
    Known{"rdma", "port_xmit_constraint_errors", {kError, "packets not sent: partition or raw constraints", 8}},
    Known{
        "rdma", "port_rcv_constraint_errors", {kError, "packets dropped on receipt: partition or raw constraints", 8}},
    Known{"rdma", "local_link_integrity_errors", {kError, "local physical errors over the port's threshold", 4}},
    Known{"rdma",
          "excessive_buffer_overrun_errors",
          {kError, "receive buffer overruns in a row: flow control failing", 4}},
    Known{"rdma", "VL15_dropped", {kError, "subnet management packets dropped", 16}},
    Known{"rdma", "port_xmit_wait", {kCongestion, "ticks the port had data to send and no credit: congestion", 32}},
    Known{"rdma", "port_xmit_data", {kTraffic, "data sent, in 4-byte words", 32, 4}},
    Known{"rdma", "port_rcv_data", {kTraffic, "data received, in 4-byte words", 32, 4}},
    Known{"rdma", "port_xmit_packets", {kTraffic, "packets sent", 32}},
    Known{"rdma", "port_rcv_packets", {kTraffic, "packets received", 32}},
    Known{"rdma_hw", "out_of_sequence", {kError, "packets received out of sequence: one was lost before them"}},
    Known{"rdma_hw", "packet_seq_err", {kError, "sequence-error NAKs received: the peer lost a packet"}},
    Known{"rdma_hw", "local_ack_timeout_err", {kError, "transport retries after an ACK timed out: loss on the path"}},
    Known{"rdma_hw", "rnr_nak_retry_err", {kError, "receiver-not-ready retries exhausted: the QP failed"}},
    Known{"rdma_hw", "implied_nak_seq_err", {kError, "responses implying a lost request (implied NAK)"}},
    Known{"rdma_hw", "duplicate_request", {kError, "duplicate requests received: the peer retransmitted"}},
    Known{"rdma_hw", "out_of_buffer", {kError, "packets dropped for want of a receive buffer"}},
    Known{"rdma_hw", "np_cnp_sent", {kCongestion, "CNPs sent for ECN-marked packets received (notification point)"}},
    Known{"rdma_hw", "rp_cnp_handled", {kCongestion, "CNPs acted on: this sender slowed down (reaction point)"}},
    Known{"rdma_hw", "np_ecn_marked_roce_packets", {kCongestion, "RoCE packets received with an ECN mark"}},
    Known{"rdma_hw", "sent_pkts", {kTraffic, "packets sent (rxe)"}},
    Known{"rdma_hw", "rcvd_pkts", {kTraffic, "packets received (rxe)"}},
    Known{"rdma_hw", "out_of_seq_request", {kError, "requests received out of sequence (rxe): one was lost"}},
    Known{"rdma_hw", "rcvd_seq_err", {kError, "sequence-error NAKs received (rxe)"}},
    Known{"rdma_hw", "retry_exceeded_err", {kError, "transport retries exhausted (rxe): the QP failed"}},
    Known{"rdma_hw", "completer_retry_err", {kError, "retransmissions by the completer (rxe): loss on the path"}},
    // rxe's RXE_CNT_COMPLETER_SCHED under another name: the completer's work was handed to its task
    Known{"rdma_hw", "ack_deferred", {CounterKind::Other, "ACKs left to the completer's task (rxe): scheduling"}},
    Known{"net", "rx_bytes", {kTraffic, "bytes received", 64, 1}},
    Known{"net", "tx_bytes", {kTraffic, "bytes sent", 64, 1}},
    Known{"net", "rx_packets", {kTraffic, "packets received"}},
    Known{"net", "tx_packets", {kTraffic, "packets sent"}},
    Known{"net", "rx_errors", {kError, "receive errors (every kind)"}},
    Known{"net", "tx_errors", {kError, "transmit errors (every kind)"}},
    Known{"net", "rx_dropped", {kError, "packets dropped on receipt (no buffer, or an unknown protocol)"}},
    Known{"net", "tx_dropped", {kError, "packets dropped before sending"}},
    Known{"net", "rx_crc_errors", {kError, "frames received with a bad CRC: the physical link"}},
    Known{"net", "rx_missed_errors", {kError, "frames the NIC missed: no room on the host"}},
    Known{"net", "carrier_changes", {kError, "link up/down transitions"}},
    // NVML's nvmlNvLinkErrorCounter_t, per active link of a GPU
    Known{"nvlink", "replay", {kError, "flits sent again after the far end found them bad (NVLink data-link replay)"}},
    Known{"nvlink", "recovery", {kError, "the link retrained after errors (NVLink data-link recovery)"}},
    Known{"nvlink", "crc_flit", {kError, "flow-control flits received with a CRC error (NVLink)"}},
    Known{"nvlink", "crc_data", {kError, "data received with a CRC error (NVLink)"}},
    Known{"nvlink", "ecc_data", {kError, "data received with an ECC error (NVLink data link; Hopper's data errors)"}},
    Known{"tcp", "RetransSegs", {kError, "TCP segments retransmitted: loss or timeouts on the path"}},
    Known{"tcp", "InErrs", {kError, "TCP segments received in error"}},
    Known{"tcp", "InSegs", {kTraffic, "TCP segments received"}},
    Known{"tcp", "OutSegs", {kTraffic, "TCP segments sent (retransmissions excluded)"}},
    Known{"tcp", "TCPLostRetransmit", {kError, "retransmitted TCP segments lost again"}},
    Known{"tcp", "TCPTimeouts", {kError, "TCP retransmission timeouts"}},
};

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// A word of a counter's name (words between '_', '-' or '.') begins with PART: "err" in "rx_crc_errors" and
/// "local_ack_timeout_err", not in "ack_deferred".
bool word_starts(std::string_view name, std::string_view part) {
  std::size_t at = 0;
  while (at < name.size()) {
    const std::size_t end = std::min(name.find_first_of("_-.", at), name.size());
    if (name.substr(at, end - at).starts_with(part)) {
      return true;
    }
    at = end + 1;
  }
  return false;
}

/// A counter the table does not name: its kind from its name, as drivers name them.
CounterKind kind_by_name(std::string_view source, std::string_view name) {
  if (source == "tcp") {
    return has(name, "Retrans") || has(name, "Timeout") || has(name, "Lost") ? kError : CounterKind::Other;
  }
  if (has(name, "pause") || has(name, "cnp") || has(name, "ecn") || has(name, "xmit_wait")) {
    return kCongestion;
  }
  if (word_starts(name, "err") || has(name, "discard") || has(name, "drop") || has(name, "timeout") ||
      has(name, "out_of_seq") || has(name, "out_of_buffer") || has(name, "retry") || has(name, "crc")) {
    return kError;
  }
  if (has(name, "bytes") || has(name, "packets") || has(name, "pkts") || has(name, "_data")) {
    return kTraffic;
  }
  return CounterKind::Other;
}

using Key = std::tuple<std::string_view, std::string_view, int, std::string_view>;
Key key_of(const CounterReading& r) { return {r.source, r.device, r.port, r.name}; }

std::string where(const CounterReading& r) {
  if (r.device.empty()) {
    return fmt::format("{} {}", r.source, r.name);
  }
  return r.port > 0 ? fmt::format("{} port {} {}", r.device, r.port, r.name) : fmt::format("{} {}", r.device, r.name);
}

}  // namespace

std::string_view name(CounterKind kind) {
  switch (kind) {
    case CounterKind::Error:
      return "error";
    case CounterKind::Congestion:
      return "congestion";
    case CounterKind::Traffic:
      return "traffic";
    case CounterKind::Other:
      break;
  }
  return "other";
}

std::optional<CounterKind> parse_counter_kind(std::string_view text) {
  for (const CounterKind k : {CounterKind::Error, CounterKind::Congestion, CounterKind::Traffic, CounterKind::Other}) {
    if (name(k) == text) {
      return k;
    }
  }
  return std::nullopt;
}

CounterInfo counter_info(std::string_view source, std::string_view name) {
  for (const auto& k : kKnown) {
    if (k.source == source && k.name == name) {
      return k.info;
    }
  }
  return CounterInfo{kind_by_name(source, name), {}, 64, 0};
}

FabricWarning classify_fabric_warning(std::string_view warning) {
  if (warning.find(": went back from ") != std::string_view::npos) {
    return FabricWarning::WentBack;
  }
  if (warning.find("-bit maximum ") != std::string_view::npos) {
    return warning.find("stuck there before the run") != std::string_view::npos ? FabricWarning::Stuck
                                                                                : FabricWarning::Saturated;
  }
  if (warning.find(": not read after the run") != std::string_view::npos) {
    return FabricWarning::Vanished;
  }
  if (warning.find("not read") != std::string_view::npos) {
    return FabricWarning::NotRead;
  }
  return FabricWarning::Other;
}

HostFabric counter_deltas(const CounterSnapshot& before, const CounterSnapshot& after) {
  HostFabric out;
  out.seconds = std::max(0.0, after.taken_s - before.taken_s);
  out.warnings = after.problems;
  std::vector<const CounterReading*> later;
  later.reserve(after.readings.size());
  for (const auto& r : after.readings) {
    later.push_back(&r);
  }
  std::sort(later.begin(), later.end(), [](const auto* a, const auto* b) { return key_of(*a) < key_of(*b); });
  std::vector<std::string> gone_devices;
  for (const auto& b : before.readings) {
    const auto found = std::lower_bound(later.begin(), later.end(), key_of(b),
                                        [](const CounterReading* r, const Key& k) { return key_of(*r) < k; });
    if (found == later.end() || key_of(**found) != key_of(b)) {
      const std::string device = b.device.empty() ? b.source : b.device;
      if (std::find(gone_devices.begin(), gone_devices.end(), device) == gone_devices.end()) {
        gone_devices.push_back(device);
        out.warnings.push_back(
            fmt::format("{}: not read after the run (removed, renamed, or unreadable): no delta", where(b)));
      }
      continue;
    }
    const CounterReading& a = **found;
    ++out.counters_read;
    const CounterInfo info = counter_info(b.source, b.name);
    if (a.value < b.value) {
      out.warnings.push_back(
          fmt::format("{}: went back from {} to {} (reset, or a driver reload): no delta", where(b), b.value, a.value));
      continue;
    }
    const std::uint64_t top = info.bits < 64 ? (std::uint64_t{1} << info.bits) - 1 : UINT64_MAX;
    const bool saturated = info.bits < 64 && a.value == top;
    if (saturated) {
      out.warnings.push_back(
          fmt::format("{}: at its {}-bit maximum {} (it saturates, it does not wrap): {}", where(b), info.bits, top,
                      b.value == top ? "stuck there before the run: no delta" : "it moved at least the delta given"));
      if (b.value == top) {
        continue;
      }
    }
    if (a.value == b.value) {
      continue;
    }
    out.moved.push_back(CounterDelta{b.source, b.device, b.port, b.name, a.value - b.value, info.kind, saturated});
  }
  return out;
}

std::optional<std::uint64_t> counted_bytes(const CounterDelta& delta) {
  const CounterInfo info = counter_info(delta.source, delta.name);
  if (info.unit_bytes == 0) {
    return std::nullopt;
  }
  return delta.delta * static_cast<std::uint64_t>(info.unit_bytes);
}

namespace {

std::string moved_text(const CounterDelta& d) {
  const std::string device = d.device.empty() ? d.source
                             : d.port > 0     ? fmt::format("{} port {}", d.device, d.port)
                                              : d.device;
  return fmt::format("{} {} +{}{}", device, d.name, d.delta, d.lower_bound ? " (at least: saturated)" : "");
}

}  // namespace

std::vector<std::string> fabric_findings(const std::vector<HostFabric>& hosts) {
  std::vector<std::string> out;
  for (const auto& h : hosts) {
    std::vector<std::string> errors;
    std::uint64_t segments = 0;
    std::uint64_t retransmitted = 0;
    for (const auto& d : h.moved) {
      if (d.source == "tcp" && d.name == "OutSegs") {
        segments = d.delta;
      } else if (d.source == "tcp" && d.name == "RetransSegs") {
        retransmitted = d.delta;
      }
    }
    // TCP retransmits a little by design (its congestion control probes until a queue drops): its counters are
    // one finding, the share of segments sent again, past kTcpRetransmitShare.
    const double share =
        static_cast<double>(retransmitted) / static_cast<double>(std::max<std::uint64_t>(segments + retransmitted, 1));
    if (retransmitted > 0 && share > kTcpRetransmitShare) {
      errors.push_back(fmt::format("TCP RetransSegs +{} ({:.2f}% of {} segments sent)", retransmitted, 100.0 * share,
                                   segments + retransmitted));
    }
    for (const auto& d : h.moved) {
      if (d.kind == CounterKind::Error && d.source != "tcp") {
        errors.push_back(moved_text(d));
      }
    }
    if (!errors.empty()) {
      std::string line = fmt::format("{}: error counters moved in {:.1f} s: ", h.host, h.seconds);
      for (std::size_t i = 0; i < errors.size(); ++i) {
        line += (i == 0 ? "" : ", ") + errors[i];
      }
      out.push_back(std::move(line));
    }
    for (const auto& l : h.links) {
      if (l.below) {
        out.push_back(fmt::format("{}: {} ({}) trained at {}, capable of {}", h.host, l.device,
                                  l.role.empty() ? l.kind : l.role, l.current, l.capable));
      }
    }
    if (!h.warnings.empty()) {
      out.push_back(fmt::format("{}: {} counter warning(s): {}{}", h.host, h.warnings.size(), h.warnings.front(),
                                h.warnings.size() > 1 ? "; ..." : ""));
    }
  }
  return out;
}

}  // namespace ccbench
