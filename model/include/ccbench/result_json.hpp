#pragma once
// ResultDocument <-> JSON (the atomic file writer: output_file.hpp).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "ccbench/result.hpp"

namespace ccbench {

nlohmann::json to_json(const ResultDocument& doc);
/// JSON text (indented by `indent`, or on one line when it is negative) where a string's bytes that
/// are not UTF-8 (a --label, a path, an environment variable) become U+FFFD instead of failing.
std::string json_text(const nlohmann::json& j, int indent = -1);
/// One result (an element of "results"), for sending between ranks and for readers.
nlohmann::json case_to_json(const CaseResult& result);
CaseResult case_from_json(const nlohmann::json& j);
/// An RDMA pair's connection (a result's "rdma"), for sending between ranks and for readers.
nlohmann::json rdma_to_json(const RdmaInfo& rdma);
RdmaInfo rdma_from_json(const nlohmann::json& j);
/// One rank's binding (an element of "environment.binding"), for sending between ranks and for readers.
nlohmann::json binding_to_json(const BindingRecord& binding);
BindingRecord binding_from_json(const nlohmann::json& j);

/// A host's fabric evidence (schema 1.8.0), with the meaning of each well-known counter that moved.
nlohmann::json fabric_to_json(const HostFabric& h);
HostFabric fabric_from_json(const nlohmann::json& j);

/// Throws std::runtime_error (nlohmann's exceptions) on documents that do not fit the schema.
ResultDocument document_from_json(const nlohmann::json& j);

}  // namespace ccbench
