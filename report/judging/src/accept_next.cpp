// What an operator does about a missed check, from what its evidence shows (issue 39, section 3), and each check's
// level: a warning-level miss is WARNING, never PASS, and alone exits 0.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "accept_checks.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report::detail {

namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const CheckOutcome* of_kind(const std::vector<CheckOutcome>& outcomes, std::string_view kind) {
  const auto it = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.kind == kind; });
  return it == outcomes.end() ? nullptr : &*it;
}

std::string step_for_lack(const AcceptCheck& c, const Gap& gap) {
  const bool fabric = c.kind == CheckKind::Counters || c.kind == CheckKind::Links;
  switch (gap.lack) {
    case Lack::Absent:
      return fabric ? "run the checks with this ccbench on every host (result schema 1.8.0 reads each host's fabric "
                      "before and after the run): imported and older results have no fabric readings"
                    : fmt::format("run what the check selects ({}{}) and judge again: the input has none",
                                  describe(c.select),
                                  c.kind == CheckKind::Busbw ? " at " + format_size(c.size_bytes, SizeStyle::Binary)
                                                             : std::string{});
    case Lack::Unjudgeable:
      return "run again with no counter reset, driver reload or reboot during the run: a counter that went back, "
             "stuck or vanished cannot be judged";
    case Lack::Inconsistent:
      return "judge each job's results on their own: a host read twice, or a reading of a host the run does not "
             "have, means files of different runs were mixed";
    case Lack::Stale:
      break;
  }
  return "run the checks again";
}

std::string step_for_busbw(const CheckOutcome& o, const std::vector<CheckOutcome>& outcomes) {
  if (o.culprit.empty()) {  // too few groups measured, none low
    return "run the bench over every group the check expects, then judge again";
  }
  const CheckOutcome* links = of_kind(outcomes, "links");
  if (links != nullptr && links->verdict == CheckVerdict::Pass) {
    return fmt::format(
        "every link trained at its capability: check GPU-NIC affinity (--bind auto), NCCL_IB_HCA and "
        "PCIe ACS (ACS on the GPU's and NIC's bridges forces peer traffic through the root complex) "
        "for {}",
        o.culprit);
  }
  if (links != nullptr && links->verdict != CheckVerdict::Pass && !links->next_step.empty()) {
    return fmt::format("fix what {} names first, a link below its capability caps bus bandwidth: {}", links->id,
                       links->next_step);
  }
  return "read the links first (ccbench-topo --links, or a links check in the profile), then check GPU-NIC "
         "affinity (--bind auto), NCCL_IB_HCA and PCIe ACS";
}

}  // namespace

std::string step_for_counter(const std::string& host, const std::string& device, const std::string& counter) {
  if (counter == "link_downed") {
    return fmt::format("{} {} went down during the run: check its cable and the switch port it plugs into", host,
                       device);
  }
  if (one_of(counter, {"symbol_error", "port_rcv_errors", "link_error_recovery", "local_link_integrity_errors",
                       "excessive_buffer_overrun_errors", "port_rcv_remote_physical_errors"})) {
    return fmt::format(
        "check the cable of {} {}: reseat or replace the cable or transceiver ({} rising is a "
        "marginal physical link), then run again",
        host, device, counter);
  }
  if (one_of(counter, {"local_ack_timeout_err", "rnr_nak_retry_err", "port_xmit_discards", "port_xmit_wait",
                       "RetransSegs", "out_of_sequence", "packet_seq_err"})) {
    return fmt::format(
        "{} on {} {}: retries or drops, so check the peer hosts and the fabric's congestion control "
        "(PFC/ECN on RoCE, the switch ports' counters)",
        counter, host, device);
  }
  if (counter.find("replay") != std::string::npos || counter.find("recovery") != std::string::npos ||
      counter.find("crc") != std::string::npos || counter.find("ecc") != std::string::npos) {
    return fmt::format(
        "{} on {} {}: run the GPU diagnostics (dcgmi diag -r 3) and check the NVLink/NVSwitch "
        "fabric manager",
        counter, host, device);
  }
  return fmt::format("{} rose on {} {}: check that device's cable and health", counter, host, device);
}

std::string step_for_link(const std::string& host, const LinkState& l, bool inactive) {
  if (inactive) {
    return fmt::format("{} {} is not ACTIVE: check its cable and the switch port it plugs into", host, l.device);
  }
  if (l.kind == "rdma_port") {
    return fmt::format("{} {} trained at {} of {}: reseat or replace the cable/transceiver of {}", host, l.device,
                       l.current, l.capable, l.device);
  }
  if (l.kind == "pcie" && l.role == "gpu") {
    return fmt::format("{} GPU {} runs PCIe {} of {}: reseat the GPU or its riser", host, l.device, l.current,
                       l.capable);
  }
  if (l.kind == "pcie") {
    return fmt::format(
        "{} {} runs PCIe {} of {}: reseat the card, and check the slot's width and bifurcation in "
        "the BIOS",
        host, l.device, l.current, l.capable);
  }
  return fmt::format("{} {} trained at {} of {}: run the GPU diagnostics (dcgmi diag -r 3)", host, l.device, l.current,
                     l.capable);
}

std::string step_for_firmware(const std::string& model) {
  return fmt::format("bring every {} to one firmware version (mlxfwmanager or mstflint), then run again", model);
}

std::string step_for_rows(CheckKind kind, const std::string& first, bool unverified) {
  if (unverified) {
    return "run again with -c 1, so that every row is verified";
  }
  if (kind == CheckKind::NoTimedOut) {
    return fmt::format(
        "{} made no progress: run it again with --timeout and NCCL_DEBUG=WARN to name the rank that "
        "hangs (README: Hangs and dead ranks), then check that rank's GPU and links",
        first);
  }
  return fmt::format(
      "data corruption in {}: drain the node and run the GPU diagnostics (dcgmi diag -r 3) before it "
      "takes jobs",
      first);
}

void finish(const Profile& profile, std::vector<CheckOutcome>& outcomes) {
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto& o = outcomes[i];
    const auto& c = profile.checks.at(i);
    if (o.verdict == CheckVerdict::Pass) {
      o.next_step.clear();
    } else if (o.evidence.lacked()) {
      o.next_step = step_for_lack(c, o.evidence.gaps.front());
    }
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) {  // after the links check has its step
    auto& o = outcomes[i];
    if (profile.checks.at(i).kind == CheckKind::Busbw && o.verdict != CheckVerdict::Pass && !o.evidence.lacked()) {
      o.next_step = step_for_busbw(o, outcomes);
    }
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto& o = outcomes[i];
    o.level = profile.checks.at(i).level;
    if (o.verdict == CheckVerdict::Fail && o.level == CheckLevel::Warning) {
      o.verdict = CheckVerdict::Warning;
    }
  }
}

}  // namespace ccbench::report::detail
