#include "ccbench/report/rows.hpp"

#include <fmt/format.h>

#include "ccbench/collective.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

RowKey key_of(const CaseResult& r) {
  const auto& coll = info(r.spec.collective);
  RowKey key;
  key.benchmark = r.benchmark;
  key.backend = r.backend;
  key.timing = std::string(name(r.timing));
  // The first sweep of --nccl-variants is what a plain run measures: it matches a plain baseline's rows
  // (and stays apart from the same run's ring rows).
  key.variant = r.variant == "configured" ? std::string() : r.variant;
  key.op = std::string(coll.name);
  key.dtype = std::string(name(r.spec.dtype));
  key.redop = coll.has_reduce_op ? std::string(name(r.spec.op)) : std::string();
  key.root = coll.has_root ? r.spec.root : -1;
  key.ranks = r.ranks;
  key.group_id = r.group_id;
  key.size_bytes = r.size_bytes;
  key.in_place = r.spec.in_place;
  return key;
}

std::string_view placement_name(bool in_place) { return in_place ? "in-place" : "out-of-place"; }

std::string describe(const RowKey& key) {
  std::string text = fmt::format("{} {} {}{} {}", key.benchmark, key.backend, key.timing,
                                 key.variant.empty() ? "" : " " + key.variant, key.dtype);
  if (!key.redop.empty()) {
    text += " " + key.redop;
  }
  if (key.root >= 0) {
    text += fmt::format(" root {}", key.root);
  }
  return text + fmt::format(" {}({}) {} {}", key.group_id, key.ranks, format_size(key.size_bytes, SizeStyle::Binary),
                            placement_name(key.in_place));
}

}  // namespace ccbench::report
