// The evidence about the network: an RDMA pair's connection (a result's "rdma") and a host's fabric counters and
// links (the document's "fabric").
#include "ccbench/result_json.hpp"
#include "result_json_detail.hpp"

namespace ccbench {

namespace {

nlohmann::json endpoint_json(const RdmaEndpoint& e) {
  return {{"rank", e.rank},
          {"host", e.host},
          {"device", e.device},
          {"port", e.port},
          {"link_layer", e.link_layer},
          {"gid_index", optional_json(e.gid_index)},
          {"gid", e.gid.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.gid)},
          {"gid_type", e.gid_type.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.gid_type)},
          {"lid", e.lid},
          {"rate_Gbps", optional_json(e.rate_Gbps)},
          {"active_mtu", e.active_mtu}};
}

RdmaEndpoint endpoint_from(const nlohmann::json& j) {
  RdmaEndpoint e;
  e.rank = j.at("rank").get<int>();
  e.host = j.at("host").get<std::string>();
  e.device = j.at("device").get<std::string>();
  e.port = j.at("port").get<int>();
  e.link_layer = j.at("link_layer").get<std::string>();
  e.gid_index = optional_from<int>(j.at("gid_index"));
  e.gid = j.at("gid").is_null() ? "" : j.at("gid").get<std::string>();
  e.gid_type = j.at("gid_type").is_null() ? "" : j.at("gid_type").get<std::string>();
  e.lid = j.at("lid").get<int>();
  e.rate_Gbps = optional_from<double>(j.at("rate_Gbps"));
  e.active_mtu = j.at("active_mtu").get<int>();
  return e;
}

}  // namespace

nlohmann::json rdma_to_json(const RdmaInfo& r) {
  nlohmann::json endpoints = nlohmann::json::array();
  for (const auto& e : r.endpoints) {
    endpoints.push_back(endpoint_json(e));
  }
  nlohmann::json j = {{"transport", r.transport}, {"mtu", r.mtu},       {"qps", r.qps},
                      {"tx_depth", r.tx_depth},   {"cq_mod", r.cq_mod}, {"inline_bytes", r.inline_bytes},
                      {"bidir", r.bidir},         {"mem", r.mem},       {"endpoints", endpoints}};
  if (r.run_bw_GBps) {
    j["run_bw_GBps"] = *r.run_bw_GBps;
  }
  if (r.posted_writes && r.posted_bytes) {  // 1.8.0
    j["posted_writes"] = *r.posted_writes;
    j["posted_bytes"] = *r.posted_bytes;
  }
  return j;
}

RdmaInfo rdma_from_json(const nlohmann::json& j) {
  RdmaInfo r;
  r.transport = j.at("transport").get<std::string>();
  r.mtu = j.at("mtu").get<int>();
  r.qps = j.at("qps").get<int>();
  r.tx_depth = j.at("tx_depth").get<int>();
  r.cq_mod = j.at("cq_mod").get<int>();
  r.inline_bytes = j.at("inline_bytes").get<int>();
  r.bidir = j.at("bidir").get<bool>();
  r.mem = j.at("mem").get<std::string>();
  r.run_bw_GBps = optional_from<double>(j.value("run_bw_GBps", nlohmann::json(nullptr)));
  r.posted_writes = optional_from<std::uint64_t>(j.value("posted_writes", nlohmann::json(nullptr)));
  r.posted_bytes = optional_from<std::uint64_t>(j.value("posted_bytes", nlohmann::json(nullptr)));
  for (const auto& e : j.at("endpoints")) {
    r.endpoints.push_back(endpoint_from(e));
  }
  return r;
}

nlohmann::json fabric_to_json(const HostFabric& h) {
  nlohmann::json moved = nlohmann::json::array();
  for (const auto& d : h.moved) {
    nlohmann::json m = {{"source", d.source}, {"device", d.device}, {"port", d.port},
                        {"name", d.name},     {"delta", d.delta},   {"kind", name(d.kind)}};
    if (d.lower_bound) {
      m["lower_bound"] = true;
    }
    if (const auto meaning = counter_info(d.source, d.name).meaning; !meaning.empty()) {
      m["meaning"] = meaning;
    }
    moved.push_back(std::move(m));
  }
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : h.links) {
    nlohmann::json j = {{"kind", l.kind}, {"device", l.device}, {"current", l.current}, {"below", l.below}};
    const auto optional = [&j](const char* key, const std::string& value) {
      if (!value.empty()) {
        j[key] = value;
      }
    };
    optional("role", l.role);
    optional("model", l.model);
    optional("capable", l.capable);
    optional("state", l.state);
    optional("firmware", l.firmware);
    if (!l.aer.empty()) {
      j["aer"] = l.aer;
    }
    links.push_back(std::move(j));
  }
  return {{"host", h.host}, {"seconds", h.seconds}, {"counters_read", h.counters_read},
          {"moved", moved}, {"links", links},       {"warnings", h.warnings}};
}

HostFabric fabric_from_json(const nlohmann::json& j) {
  HostFabric h;
  h.host = j.at("host").get<std::string>();
  h.seconds = j.at("seconds").get<double>();
  h.counters_read = j.at("counters_read").get<std::size_t>();
  for (const auto& m : j.at("moved")) {
    CounterDelta d;
    d.source = m.at("source").get<std::string>();
    d.device = m.at("device").get<std::string>();
    d.port = m.at("port").get<int>();
    d.name = m.at("name").get<std::string>();
    d.delta = m.at("delta").get<std::uint64_t>();
    d.kind = parse_counter_kind(m.at("kind").get<std::string>()).value_or(CounterKind::Other);
    d.lower_bound = m.value("lower_bound", false);
    h.moved.push_back(std::move(d));
  }
  for (const auto& l : j.at("links")) {
    LinkState s;
    s.kind = l.at("kind").get<std::string>();
    s.device = l.at("device").get<std::string>();
    s.current = l.at("current").get<std::string>();
    s.below = l.at("below").get<bool>();
    s.role = l.value("role", "");
    s.model = l.value("model", "");
    s.capable = l.value("capable", "");
    s.state = l.value("state", "");
    s.firmware = l.value("firmware", "");
    s.aer = l.value("aer", std::map<std::string, std::uint64_t>{});
    h.links.push_back(std::move(s));
  }
  h.warnings = j.at("warnings").get<std::vector<std::string>>();
  return h;
}

}  // namespace ccbench
