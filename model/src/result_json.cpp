// The result document to and from JSON: its run, environment (hosts, libraries, variables, binding), topology,
// fabric and results (one result: result_json_case.cpp; RDMA connections and fabric: result_json_fabric.cpp).
#include "ccbench/result_json.hpp"

#include <stdexcept>

#include "ccbench/binding.hpp"
#include "result_json_detail.hpp"

namespace ccbench {

nlohmann::json binding_to_json(const BindingRecord& b) {
  return {{"rank", b.rank},
          {"host", b.host},
          {"policy", name(b.policy)},
          {"applied", b.applied},
          {"numa_node", optional_json(b.numa_node)},
          {"cpus", b.cpus},
          {"memory", b.memory},
          {"gpu", optional_json(b.gpu)},
          {"nic", optional_json(b.nic)},
          {"nic_applied", optional_json(b.nic_applied)},
          {"note", b.note}};
}

BindingRecord binding_from_json(const nlohmann::json& j) {
  static constexpr BindPolicy kPolicies[] = {BindPolicy::None, BindPolicy::Auto};
  BindingRecord b;
  b.rank = j.at("rank").get<int>();
  b.host = j.at("host").get<std::string>();
  b.policy = enum_from(j.at("policy"), kPolicies, "binding policy");
  b.applied = j.at("applied").get<bool>();
  b.numa_node = optional_from<int>(j.at("numa_node"));
  b.cpus = j.at("cpus").get<std::string>();
  b.memory = j.at("memory").get<std::string>();
  b.gpu = optional_from<std::string>(j.at("gpu"));
  b.nic = optional_from<std::string>(j.at("nic"));
  b.nic_applied = optional_from<std::string>(j.at("nic_applied"));
  b.note = j.at("note").get<std::string>();
  return b;
}

nlohmann::json to_json(const ResultDocument& doc) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : doc.environment.hosts) {
    hosts.push_back({{"hostname", h.hostname}, {"ranks", h.ranks}});
    if (!h.machine.empty()) {  // 1.11.0
      hosts.back()["machine"] = h.machine;
    }
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : doc.results) {
    results.push_back(case_to_json(r));
  }
  nlohmann::json environment = {
      {"hosts", hosts}, {"libraries", doc.environment.libraries}, {"variables", doc.environment.variables}};
  if (!doc.environment.binding.empty()) {  // optional since 1.2: a document built without ranks has none
    nlohmann::json binding = nlohmann::json::array();
    for (const auto& b : doc.environment.binding) {
      binding.push_back(binding_to_json(b));
    }
    environment["binding"] = binding;
  }
  const auto& run = doc.run;
  nlohmann::json out = {
      {"schema", kSchemaName},
      {"schema_version", kSchemaVersion},
      {"run",
       {{"id", run.id},
        {"benchmark", run.benchmark},
        {"started_utc", run.started_utc},
        {"ended_utc", run.ended_utc.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.ended_utc)},
        {"argv", run.argv},
        {"tool_version", run.tool_version},
        {"git_revision", run.git_revision},
        {"label", run.label}}},
      {"environment", environment},
      {"topology", doc.topology},
      {"results", results}};
  if (run.source) {  // 1.10.0, imported runs only
    const auto& src = *run.source;
    out["run"]["source"] = {{"tool", src.tool},
                            {"version", src.version},
                            {"format", src.format},
                            {"files", src.files},
                            {"notes", src.notes}};
  }
  if (!doc.fabric.empty()) {
    nlohmann::json fabric = nlohmann::json::array();
    for (const auto& h : doc.fabric) {
      fabric.push_back(fabric_to_json(h));
    }
    out["fabric"] = std::move(fabric);
  }
  return out;
}

ResultDocument document_from_json(const nlohmann::json& j) {
  if (j.at("schema").get<std::string>() != kSchemaName) {
    throw std::runtime_error("not a ccbench result document (schema " + j.at("schema").dump() + ")");
  }
  ResultDocument doc;
  const auto& run = j.at("run");
  doc.run.id = run.at("id").get<std::string>();
  doc.run.benchmark = run.at("benchmark").get<std::string>();
  doc.run.started_utc = run.at("started_utc").get<std::string>();
  doc.run.ended_utc = run.at("ended_utc").is_null() ? "" : run.at("ended_utc").get<std::string>();
  doc.run.argv = run.at("argv").get<std::vector<std::string>>();
  doc.run.tool_version = run.at("tool_version").get<std::string>();
  doc.run.git_revision = run.at("git_revision").get<std::string>();
  doc.run.label = run.at("label").get<std::string>();
  if (const auto src = run.find("source"); src != run.end()) {  // 1.10.0
    doc.run.source = RunSource{src->at("tool").get<std::string>(), src->at("version").get<std::string>(),
                               src->at("format").get<std::string>(), src->at("files").get<std::vector<std::string>>(),
                               src->at("notes").get<std::vector<std::string>>()};
  }
  const auto& env = j.at("environment");
  for (const auto& h : env.at("hosts")) {
    doc.environment.hosts.emplace_back(h.at("hostname").get<std::string>(), h.at("ranks").get<std::vector<int>>(),
                                       h.value("machine", std::string()));
  }
  doc.environment.libraries = env.at("libraries").get<std::map<std::string, std::string>>();
  doc.environment.variables = env.at("variables").get<std::map<std::string, std::string>>();
  for (const auto& b : env.value("binding", nlohmann::json::array())) {  // added in 1.2.0
    doc.environment.binding.push_back(binding_from_json(b));
  }
  doc.topology = j.at("topology");
  for (const auto& h : j.value("fabric", nlohmann::json::array())) {  // added in 1.8.0
    doc.fabric.push_back(fabric_from_json(h));
  }
  for (const auto& r : j.at("results")) {
    doc.results.push_back(case_from_json(r));
  }
  return doc;
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ccbench
