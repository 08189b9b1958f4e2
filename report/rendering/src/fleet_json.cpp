// The fleet verdict as JSON: every key in name order, the pairs written one at a time.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "ccbench/report/verdict_text.hpp"
#include "renderers.hpp"

namespace ccbench::report::detail {

namespace {

using nlohmann::json;

json optional_json(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

/// Each host's device, by (name, lane): looked up once per pair of half a million.
using Devices = std::map<std::pair<std::string, int>, std::string>;

Devices devices_of(const FleetVerdict& v) {
  Devices out;
  for (const auto& h : v.hosts) {
    out.emplace(std::pair{h.name, h.lane}, h.device);
  }
  return out;
}

json pair_json(const FleetVerdict& v, const Devices& devices, const FleetPair& p) {
  const auto device = [&](const std::string& host) {
    const auto it = devices.find({host, p.lane});
    return it == devices.end() ? std::string{} : it->second;
  };
  return {{"hosts", {p.host_a, p.host_b}},
          {"ranks", {p.rank_a, p.rank_b}},
          {"local_rank", p.lane},
          {"devices", {device(p.host_a), device(p.host_b)}},
          {"status", p.status},
          {"value", optional_json(p.value)},
          {"of_reference", optional_json(p.of_reference())},
          {"verdict", !p.low                    ? (p.suspicious.empty() ? "ok" : "suspicious")
                      : p.across_split          ? "split"
                      : !p.explained_by.empty() ? "low"
                      : p.cannot_tell           ? "cannot_tell"
                                                : "bad_link"},
          {"explained_by", p.explained_by.empty() ? json(nullptr) : json(p.explained_by)},
          {"file", v.files.at(p.file)}};
}

std::string dumped(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

/// `text` (a dump at indent 2) as it reads one level down.
std::string indented(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    out += c;
    if (c == '\n') {
      out += "  ";
    }
  }
  return out;
}

json head_json(const FleetVerdict& v) {
  json hosts = json::array();
  for (const auto& h : v.hosts) {
    hosts.push_back({{"host", h.name},
                     {"local_rank", h.lane},
                     {"rank", h.rank},
                     {"device", h.device},
                     {"pairs", h.pairs},
                     {"low", h.low},
                     {"median_of_reference", optional_json(h.median_score)},
                     {"verdict", h.bad ? "bad_host" : "ok"}});
  }
  json bad_hosts = json::array();
  for (const FleetHost* h : v.bad_hosts()) {
    bad_hosts.push_back({{"host", h->name}, {"local_rank", h->lane}, {"rank", h->rank}, {"device", h->device}});
  }
  json bad_links = json::array();
  for (const FleetPair* p : v.bad_links()) {
    bad_links.push_back(
        {{"hosts", {p->host_a, p->host_b}}, {"ranks", {p->rank_a, p->rank_b}}, {"local_rank", p->lane}});
  }
  json cannot_tell = json::array();
  for (const FleetPair* p : v.cannot_tell()) {
    cannot_tell.push_back(
        {{"hosts", {p->host_a, p->host_b}}, {"ranks", {p->rank_a, p->rank_b}}, {"local_rank", p->lane}});
  }
  json suspicious = json::array();
  for (const FleetPair* p : v.suspicious()) {
    suspicious.push_back({{"hosts", {p->host_a, p->host_b}},
                          {"ranks", {p->rank_a, p->rank_b}},
                          {"local_rank", p->lane},
                          {"why", p->suspicious}});
  }
  json groups = json::array();
  json low_groups = json::array();
  for (const auto& g : v.groups) {
    groups.push_back({{"id", g.id},
                      {"hosts", g.hosts},
                      {"ranks", g.ranks},
                      {"status", g.status},
                      {"value", optional_json(g.value)},
                      {"of_reference", optional_json(g.of_reference())},
                      {"verdict", g.low ? (g.explained ? "low" : "low_group") : "ok"},
                      {"file", g.file}});
    if (g.low && !g.explained) {
      low_groups.push_back({{"id", g.id}, {"hosts", g.hosts}, {"ranks", g.ranks}});
    }
  }
  json splits = json::array();
  for (const auto& s : v.splits) {
    splits.push_back({{"local_rank", s.lane},
                      {"parts", s.parts},
                      {"pairs_across", s.pairs_across},
                      {"median_of_reference_across", optional_json(s.median_across)}});
  }
  const auto per_lane = [](const std::vector<std::optional<double>>& values) {
    json out = json::array();
    for (const auto& x : values) {
      out.push_back(optional_json(x));
    }
    return out;
  };
  json head = {{"benchmark", v.benchmark},
               {"metric", v.metric},
               {"stat", v.stat},
               {"unit", v.unit},
               {"size_bytes", v.size_bytes},
               {"in_place", v.in_place},
               {"threshold", v.threshold},
               {"rule", v.rule()},
               {"level", per_lane(v.level)},
               {"anchor", per_lane(v.anchor)},
               {"anchor_basis", v.anchor_basis},
               {"reference", per_lane(v.reference)},
               {"fleet_low", v.fleet_low},
               {"splits", splits},
               {"partial", v.partial},
               {"missing_pairs", v.missing},
               {"measured", v.measured},
               {"files", v.files},
               {"bad_hosts", bad_hosts},
               {"bad_links", bad_links},
               {"hosts", hosts},
               {"groups", groups},
               {"low_groups", low_groups},
               {"verdict", v.anything_named() ? "fail" : "pass"}};
  if (const auto evidence = fleet_evidence(v); !evidence.empty()) {  // 1.8.0 results only: older verdicts unchanged
    head["evidence"] = evidence;
  }
  if (!cannot_tell.empty()) {
    head["cannot_tell"] = cannot_tell;
  }
  if (!suspicious.empty()) {
    head["suspicious_pairs"] = suspicious;
  }
  if (!v.level_notes.empty()) {
    head["level_notes"] = v.level_notes;
  }
  return head;
}

/// The document key by key in name order (as a dump), with "pairs" written one pair at a time: a tree of half
/// a million pairs would take gigabytes.
}  // namespace

std::string JsonRenderer::render(const FleetVerdict& v) const {
  const json head = head_json(v);
  const Devices devices = devices_of(v);
  std::string out = "{";
  bool pairs_done = false;
  const auto write_pairs = [&] {
    out += "\n  \"pairs\": [";
    for (std::size_t i = 0; i < v.pairs.size(); ++i) {
      out += (i == 0 ? "\n    " : ",\n    ") + indented(indented(dumped(pair_json(v, devices, v.pairs[i]))));
    }
    out += v.pairs.empty() ? "]," : "\n  ],";
    pairs_done = true;
  };
  for (const auto& [key, value] : head.items()) {
    if (!pairs_done && key > "pairs") {
      write_pairs();
    }
    out += fmt::format("\n  {}: {},", json(key).dump(), indented(dumped(value)));
  }
  if (!pairs_done) {
    write_pairs();
  }
  out.pop_back();  // the last comma
  return out + "\n}\n";
}

}  // namespace ccbench::report::detail
