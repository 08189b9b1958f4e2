// Acceptance checks on the fabric's own evidence (result schema 1.8.0): kind counters and kind links.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "accept_checks.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report::detail {

namespace {

/// Every host's evidence in the input, run by run.
std::vector<std::pair<const LoadedRun*, const HostFabric*>> fabric_of(const std::vector<LoadedRun>& runs) {
  std::vector<std::pair<const LoadedRun*, const HostFabric*>> out;
  for (const auto& run : runs) {
    for (const auto& h : run.doc.fabric) {
      out.emplace_back(&run, &h);
    }
  }
  return out;
}

std::string no_fabric(const std::vector<LoadedRun>& runs) {
  return fmt::format(
      "no fabric evidence in the input ({}): results of ccbench before result schema 1.8.0, or "
      "imported ones, have none",
      input_summary(runs));
}

/// A fabric check covers every host of every run: a host without its reading (absent evidence), a host read twice
/// or a reading of a host the run does not have (inconsistent evidence) fails it, each named.
/// Hosts of a run without their reading (absent), readings of a host the run lacks or of one host twice (inconsistent).
std::vector<Gap> coverage_problems(const std::vector<LoadedRun>& runs) {
  std::vector<Gap> out;
  for (const auto& run : runs) {
    std::map<std::string, std::size_t> readings;
    for (const auto& h : run.doc.fabric) {
      ++readings[h.host];
    }
    std::vector<std::string> missing;
    std::size_t hosts = 0;
    for (const auto& h : run.doc.environment.hosts) {
      ++hosts;
      if (!readings.contains(h.hostname)) {
        missing.push_back(printable(h.hostname));
      }
    }
    if (!missing.empty()) {
      out.push_back({Lack::Absent, fmt::format("{}: no fabric evidence of {} of its {} host(s): {}",
                                               printable(run.path), missing.size(), hosts, fmt::join(missing, ", "))});
    }
    for (const auto& [name, count] : readings) {
      const std::string& host = name;  // clang before 16 cannot capture a structured binding
      const bool in_run = std::any_of(run.doc.environment.hosts.begin(), run.doc.environment.hosts.end(),
                                      [&host](const auto& h) { return h.hostname == host; });
      if (!in_run) {
        out.push_back({Lack::Inconsistent, fmt::format("{}: fabric evidence of host {}, which is not a host of the run",
                                                       printable(run.path), printable(host))});
      } else if (count > 1) {
        out.push_back({Lack::Inconsistent, fmt::format("{}: host {} has {} fabric readings (one per host)",
                                                       printable(run.path), printable(host), count)});
      }
    }
  }
  return out;
}

std::string device_of(const CounterDelta& d) {
  if (d.device.empty()) {
    return d.source == "tcp" ? "TCP" : d.source;
  }
  return d.port > 0 ? fmt::format("{} port {}", d.device, d.port) : d.device;
}

/// The bytes the device of `d` moved during the run (TCP's: the host's network devices but lo); 0 when unknown.
double bytes_moved(const HostFabric& h, const CounterDelta& d) {
  double bytes = 0;
  for (const auto& m : h.moved) {
    const auto counted = counted_bytes(m);
    if (!counted) {
      continue;
    }
    const bool same = d.source == "tcp" ? m.source == "net" && m.device != "lo"
                      : d.source == "rdma" || d.source == "rdma_hw"
                          ? m.source == "rdma" && m.device == d.device && m.port == d.port
                          : m.source == "net" && m.device == d.device;
    bytes += same ? static_cast<double>(*counted) : 0.0;
  }
  return bytes;
}

/// A counter's rate per `per` over the run; unset when it cannot be worked out (no time, no bytes).
std::optional<double> rate_of(const HostFabric& h, const CounterDelta& d, const std::string& per) {
  const auto delta = static_cast<double>(d.delta);
  if (per == "GB") {
    const double bytes = bytes_moved(h, d);
    return bytes > 0 ? std::optional(delta / (bytes / 1e9)) : std::nullopt;
  }
  const double unit = per == "hour" ? 3600.0 : per == "minute" ? 60.0 : 1.0;
  return h.seconds > 0 ? std::optional(delta / h.seconds * unit) : std::nullopt;
}

std::vector<std::string> whats(const std::vector<Gap>& gaps) {
  std::vector<std::string> out;
  out.reserve(gaps.size());
  for (const auto& g : gaps) {
    out.push_back(g.what);
  }
  return out;
}

void add_once(std::vector<std::string>& items, std::string item) {
  if (std::find(items.begin(), items.end(), item) == items.end()) {
    items.push_back(std::move(item));
  }
}

}  // namespace

void evaluate_counters(const AcceptCheck& c, const std::vector<LoadedRun>& runs, CheckOutcome& out) {
  // The bounds themselves are in the description: the column holds their count.
  std::vector<std::string> bounds;
  if (!c.fatal.empty()) {
    bounds.push_back(fmt::format("{} fatal on any rise", c.fatal.size()));
  }
  if (!c.rates.empty()) {
    bounds.push_back(fmt::format("{} rate bound{}", c.rates.size(), c.rates.size() == 1 ? "" : "s"));
  }
  out.threshold = fmt::format("{}", fmt::join(bounds, ", "));
  const auto hosts = fabric_of(runs);
  if (hosts.empty()) {
    lacked(out, {{Lack::Absent, no_fabric(runs)}});
    return;
  }
  std::vector<std::string> culprits;
  std::vector<std::string> unjudged;  // evidence that cannot be judged: never a PASS
  std::size_t errors = 0;
  for (const auto& [run, h] : hosts) {
    for (const auto& warning : h->warnings) {  // a counter that went back, stuck, vanished, a file not read
      if (classify_fabric_warning(warning) != FabricWarning::Saturated) {
        add_once(unjudged, fmt::format("{}: {}", printable(h->host), printable(warning)));
      }
    }
    for (const auto& d : h->moved) {
      errors += d.kind == CounterKind::Error ? 1 : 0;
      const std::string what = fmt::format("{} {} {} +{}{}", printable(h->host), device_of(d), d.name, d.delta,
                                           d.lower_bound ? " at least (saturated)" : "");
      const std::string host = printable(h->host);  // clang before 16 cannot capture a structured binding
      const auto step = [&out, &host, &d] {
        if (out.next_step.empty()) {
          out.next_step = step_for_counter(host, device_of(d), d.name);
        }
      };
      if (std::find(c.fatal.begin(), c.fatal.end(), d.name) != c.fatal.end()) {
        add_once(culprits, what + " (any rise fails)");
        step();
      }
      for (const auto& bound : c.rates) {
        if (bound.counter != d.name) {
          continue;
        }
        const auto rate = rate_of(*h, d, bound.per);
        if (!rate) {
          add_once(unjudged, fmt::format("{} per {}: no time or no bytes to divide by", what, bound.per));
        } else if (*rate > bound.max) {
          add_once(culprits,
                   fmt::format("{} in {:.1f} s: {:.3g}/{} > {:g}", what, h->seconds, *rate, bound.per, bound.max));
          step();
        } else if (d.lower_bound) {
          add_once(unjudged, fmt::format("{}: saturated, its rate is at least {:.3g}/{}", what, *rate, bound.per));
        }
      }
    }
  }
  const auto coverage = coverage_problems(runs);
  if (culprits.empty()) {  // nothing against it: the evidence rule judges what it lacked
    std::vector<Gap> gaps = coverage;
    for (const auto& u : unjudged) {
      gaps.push_back({Lack::Unjudgeable, u});
    }
    out.evidence = rule_on(Stakes::Acceptance, std::move(gaps));
    out.verdict = verdict_on(out.evidence);
  } else {
    out.verdict = CheckVerdict::Fail;
  }
  out.measured =
      fmt::format("{} over bound, {} error counter(s) moved on {} host(s)", culprits.size(), errors, hosts.size());
  std::vector<std::string> named = whats(coverage);
  named.insert(named.end(), culprits.begin(), culprits.end());
  out.culprit = capped(named, "; ");
  out.detail = culprits.empty() ? fmt::format("{} host reading(s) looked at", hosts.size())
                                : fmt::format("{} counter(s) over their bounds", culprits.size());
  if (!unjudged.empty()) {
    out.detail += fmt::format("; not judged, which fails the check: {}", capped(unjudged, "; "));
  }
}

void evaluate_links(const AcceptCheck& c, const std::vector<LoadedRun>& runs, CheckOutcome& out) {
  out.threshold = c.one_firmware_per_model ? "at capability; one firmware per HCA model" : "at capability";
  const auto hosts = fabric_of(runs);
  if (hosts.empty()) {
    lacked(out, {{Lack::Absent, no_fabric(runs)}});
    return;
  }
  std::vector<std::string> unread;  // hosts with no link read: absent evidence, not a link found low
  std::vector<std::string> culprits;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> firmware;  // model -> version -> hosts
  std::size_t links = 0;
  std::size_t below = 0;
  for (const auto& [run, h] : hosts) {
    if (h->links.empty()) {  // nothing to judge is no evidence of health
      add_once(unread, fmt::format("{}: no link read (no RDMA port, no NIC or GPU PCIe link in its sysfs)",
                                   printable(h->host)));
    }
    for (const auto& l : h->links) {
      ++links;
      const bool inactive = l.kind == "rdma_port" && l.state.find("ACTIVE") == std::string::npos;
      if (inactive) {
        ++below;
        add_once(culprits, fmt::format("{} {} ({}) is {}", printable(h->host), printable(l.device), l.role,
                                       l.state.empty() ? std::string{"in no state read"} : printable(l.state)));
        out.next_step = out.next_step.empty() ? step_for_link(printable(h->host), l, true) : out.next_step;
      } else if (l.below) {
        ++below;
        add_once(culprits, fmt::format("{} {} ({}) trained at {}, capable of {}", printable(h->host),
                                       printable(l.device), l.role, printable(l.current), printable(l.capable)));
        out.next_step = out.next_step.empty() ? step_for_link(printable(h->host), l, false) : out.next_step;
      }
      if (l.kind == "rdma_port" && !l.model.empty() && !l.firmware.empty()) {
        add_once(firmware[l.model][l.firmware], printable(h->host));
      }
    }
  }
  if (c.one_firmware_per_model) {
    for (const auto& [model, versions] : firmware) {
      if (versions.size() > 1) {
        std::vector<std::string> parts;
        for (const auto& [version, on] : versions) {
          parts.push_back(fmt::format("{} on {}", printable(version), fmt::join(on, ",")));
        }
        culprits.push_back(
            fmt::format("{} runs {} firmware versions: {}", printable(model), versions.size(), fmt::join(parts, "; ")));
        out.next_step = out.next_step.empty() ? step_for_firmware(printable(model)) : out.next_step;
      }
    }
  }
  auto coverage = coverage_problems(runs);
  for (const auto& u : unread) {
    coverage.push_back({Lack::Absent, u});
  }
  if (culprits.empty()) {  // nothing against it: the evidence rule judges what it lacked
    out.evidence = rule_on(Stakes::Acceptance, coverage);
    out.verdict = verdict_on(out.evidence);
  } else {
    out.verdict = CheckVerdict::Fail;
  }
  out.measured = fmt::format("{} of {} link readings below capability or not active", below, links);
  std::vector<std::string> named = whats(coverage);
  named.insert(named.end(), culprits.begin(), culprits.end());
  out.culprit = capped(named, "; ");
  out.detail = fmt::format("{} host reading(s), {} HCA model(s) with firmware", hosts.size(), firmware.size());
}

}  // namespace ccbench::report::detail
