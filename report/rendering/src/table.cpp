#include "ccbench/report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include <tuple>
#include <utility>
#include "ccbench/rank_times.hpp"

#include "ccbench/collective.hpp"
#include "ccbench/report/rows.hpp"
#include "ccbench/report/text.hpp"
#include "records.hpp"
#include "renderers.hpp"
#include "text_table.hpp"

namespace ccbench::report {

namespace {

using detail::Cell;
using detail::Column;
using detail::TextTable;

constexpr double kUs = 1e6;

}  // namespace

TableModel make_table_model(const std::vector<LoadedRun>& runs) {
  std::vector<TableSection> out;
  for (const auto& run : runs) {
    std::map<RowKey, std::size_t> index;
    for (const auto& r : run.doc.results) {
      auto key = key_of(r);
      key.size_bytes = 0;
      key.in_place = false;
      const auto [it, added] = index.emplace(key, out.size());
      if (added) {
        out.push_back({&run, key, {}});
      }
      out[it->second].cases.push_back(&r);
    }
  }
  for (auto& s : out) {
    std::stable_sort(s.cases.begin(), s.cases.end(), [](const CaseResult* a, const CaseResult* b) {
      return std::tie(a->size_bytes, a->spec.in_place) < std::tie(b->size_bytes, b->spec.in_place);
    });
  }
  return TableModel{std::move(out)};
}

namespace {

const char* status_colour(const CaseResult& r) {
  switch (r.status) {
    case CaseStatus::Ok:
      return r.wrong_elements.value_or(0) > 0 ? "31" : nullptr;
    case CaseStatus::Skipped:
      return "33";
    case CaseStatus::Failed:
    case CaseStatus::TimedOut:
      return "31";
  }
  return nullptr;
}

std::optional<double> us(const std::optional<Summary>& s, double Summary::*field) {
  return s ? std::optional<double>((*s).*field * kUs) : std::nullopt;
}

std::string wrong_text(const CaseResult& r) {
  return r.wrong_elements ? std::to_string(*r.wrong_elements) : std::string("-");
}

std::string hosts_of(const LoadedRun& run) {
  std::vector<std::string> names;
  for (const auto& h : run.doc.environment.hosts) {
    names.push_back(printable(h.hostname));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string ranks_text(const std::vector<int>& ranks) {
  if (ranks.empty()) {
    return "";
  }
  const bool consecutive = ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  return consecutive && ranks.size() > 2 ? fmt::format("ranks {}-{}", ranks.front(), ranks.back())
                                         : fmt::format("ranks {}", fmt::join(ranks, ","));
}

/// "ccbench 0.1.0 (git abc)", or for an imported run "imported from nccl-tests 2.17.8 (a.log, b.log) by ccbench ...".
std::string made_by(const RunInfo& run) {
  auto ours = fmt::format("ccbench {} (git {})", run.tool_version, run.git_revision);
  if (!run.source) {
    return ours;
  }
  const auto& src = *run.source;
  return fmt::format("imported from {}{} {} ({}) by {}", src.tool, src.version.empty() ? "" : " " + src.version,
                     src.format, fmt::join(src.files, ", "), ours);
}

std::string section_heading(const TableSection& s) {
  const auto& doc = s.run->doc;
  const auto& first = *s.cases.front();
  std::string libs;
  for (const auto& [k, v] : doc.environment.libraries) {
    libs += fmt::format("{}{}: {}", libs.empty() ? "" : ", ", k, v);
  }
  std::string members = ranks_text(first.group_ranks);
  if (!first.group_hosts.empty()) {
    members += fmt::format(" on {}", fmt::join(first.group_hosts, ","));
  }
  std::string what = fmt::format("{} {}", s.key.op, s.key.dtype);
  what += s.key.redop.empty() ? "" : " " + s.key.redop;
  what += s.key.root >= 0 ? fmt::format(" root {}", s.key.root) : "";
  return fmt::format(
      "{} ({}): {}, group {}{}\n"
      "file {} (schema {}), {}, started {}, run {}\n"
      "{} rank(s) on {} host(s) ({}); backend {} ({}); timing {}{}, {}\n"
      "time = median and p95 per op (slowest rank), us; rates GB/s (1e9 B/s); %peak of busbw\n",
      printable(s.run->name()), printable(doc.run.benchmark), what, printable(first.group_id),
      members.empty() ? "" : " (" + printable(members) + ")", printable(s.run->path), s.run->schema_version,
      printable(made_by(doc.run)), doc.run.started_utc, printable(doc.run.id), first.ranks, first.nodes,
      hosts_of(*s.run), s.key.backend, printable(libs), s.key.timing,
      first.variant.empty() ? "" : "; --nccl-variants: " + printable(first.variant), printable(first.clock));
}

/// One row per size, out-of-place and in-place side by side (nccl-tests' layout).
TextTable side_by_side(const TableSection& s, std::vector<std::string>& notes) {
  std::vector<Column> cols = {{"size"}, {"bytes"}, {"count"}};
  for (const char* side : {"out", "in"}) {
    for (const char* c : {"p50 us", "p95 us", "algbw", "busbw", "%peak", "wrong"}) {
      cols.push_back({fmt::format("{}:{}", side, c)});
    }
  }
  TextTable table(cols);
  std::map<std::uint64_t, std::pair<const CaseResult*, const CaseResult*>> by_size;
  for (const auto* r : s.cases) {
    auto& slot = by_size[r->size_bytes];
    (r->spec.in_place ? slot.second : slot.first) = r;
  }
  for (const auto& [size, pair] : by_size) {
    const auto* any = pair.first != nullptr ? pair.first : pair.second;
    std::vector<Cell> row = {
        {format_size(size, SizeStyle::Binary)}, {std::to_string(size)}, {std::to_string(any->spec.count)}};
    for (const auto* r : {pair.first, pair.second}) {
      if (r == nullptr || r->status != CaseStatus::Ok) {
        const std::string text = r == nullptr ? "-" : std::string(name(r->status));
        row.push_back({text, r == nullptr ? nullptr : status_colour(*r)});
        row.insert(row.end(), 5, Cell{"-"});
        if (r != nullptr) {
          notes.push_back(fmt::format("{} {}: {}: {}", format_size(size, SizeStyle::Binary),
                                      placement_name(r->spec.in_place), name(r->status), printable(r->reason)));
        }
        continue;
      }
      row.push_back({format_number(us(r->time, &Summary::p50), 2)});
      row.push_back({format_number(us(r->time, &Summary::p95), 2)});
      row.push_back({format_number(r->algbw_GBps, 2)});
      row.push_back({format_number(r->busbw_GBps, 2)});
      row.push_back({format_number(r->pct_of_peak, 1)});
      row.push_back({wrong_text(*r), status_colour(*r)});
    }
    table.add_row(std::move(row));
  }
  return table;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

std::string render_text(const std::vector<TableSection>& sections, bool markdown, bool colour) {
  // Markdown renders inline HTML: every line of ours that holds input is escaped there.
  const auto md = [markdown](const std::string& text) { return markdown ? html_escape(text) : text; };
  const std::string bullet = markdown ? "- " : "# ";
  std::string out;
  for (std::size_t at = 0; at < sections.size(); ++at) {
    const auto& s = sections[at];
    std::vector<std::string> notes;
    const auto table = side_by_side(s, notes);
    const auto heading = lines_of(section_heading(s));
    for (std::size_t i = 0; i < heading.size(); ++i) {
      if (markdown) {
        out += i == 0 ? "### " + md(heading[i]) + "\n\n" : md(heading[i]) + "  \n";  // hard line breaks
      } else {
        out += "# " + heading[i] + "\n";
      }
    }
    out += markdown ? "\n" + table.markdown() : table.terminal(colour);
    for (const auto& n : notes) {
      out += bullet + md(n) + "\n";
    }
    const auto peak = std::find_if(s.cases.begin(), s.cases.end(), [](const auto* r) { return r->peak_GBps; });
    if (peak != s.cases.end()) {
      out +=
          bullet +
          md(fmt::format("peak {} GB/s ({})", format_number((*peak)->peak_GBps, 1), printable((*peak)->peak_basis))) +
          "\n";
    }
    if (at + 1 == sections.size() || sections[at + 1].run != s.run) {  // a run's last table: its fabric's evidence
      for (const auto& finding : fabric_findings(s.run->doc.fabric)) {
        out += bullet + md("fabric: " + printable(finding)) + "\n";
      }
      for (const auto& finding : straggler_findings(s.run->doc)) {  // --per-rank
        out += bullet + md(printable(finding)) + "\n";
      }
    }
    out += "\n";
  }
  return out;
}

/// One flat record per case: what CSV rows and the JSON summary hold.
nlohmann::ordered_json flat_row(const LoadedRun& run, const CaseResult& r) {
  const auto key = key_of(r);
  return nlohmann::ordered_json{
      {"run", run.name()},
      {"file", run.path},
      {"benchmark", key.benchmark},
      {"backend", key.backend},
      {"timing", key.timing},
      {"variant", r.variant},
      {"op", key.op},
      {"dtype", key.dtype},
      {"redop", key.redop},
      {"root", key.root >= 0 ? nlohmann::ordered_json(key.root) : nlohmann::ordered_json(nullptr)},
      {"group_id", key.group_id},
      {"ranks", key.ranks},
      {"nodes", r.nodes},
      {"size_bytes", key.size_bytes},
      {"count", r.spec.count},
      {"in_place", key.in_place},
      {"status", name(r.status)},
      {"n", r.time ? nlohmann::ordered_json(r.time->n) : nlohmann::ordered_json(nullptr)},
      {"p50_us", detail::number_or_null(us(r.time, &Summary::p50))},
      {"p95_us", detail::number_or_null(us(r.time, &Summary::p95))},
      {"p50_ci95_lo_us", r.time && r.time->p50_ci95 ? nlohmann::ordered_json(r.time->p50_ci95->lo * kUs) : nullptr},
      {"p50_ci95_hi_us", r.time && r.time->p50_ci95 ? nlohmann::ordered_json(r.time->p50_ci95->hi * kUs) : nullptr},
      {"algbw_GBps", r.algbw_GBps},
      {"busbw_GBps", r.busbw_GBps},
      {"peak_GBps", detail::number_or_null(r.peak_GBps)},
      {"pct_of_peak", detail::number_or_null(r.pct_of_peak)},
      {"wrong_elements", r.wrong_elements ? nlohmann::ordered_json(*r.wrong_elements) : nullptr},
      {"reason", r.reason}};
}

/// Per run and group, what a dashboard plots: busbw at the largest size measured (the worse
/// placement), the best busbw, and how many cases ended how.
nlohmann::ordered_json group_digest(const TableSection& s) {
  const CaseResult* largest = nullptr;
  const CaseResult* best = nullptr;
  std::map<std::string, int> statuses;
  std::uint64_t wrong = 0;
  for (const auto* r : s.cases) {
    ++statuses[std::string(name(r->status))];
    wrong += r->wrong_elements.value_or(0);
    if (r->status != CaseStatus::Ok) {
      continue;
    }
    if (largest == nullptr || r->size_bytes > largest->size_bytes ||
        (r->size_bytes == largest->size_bytes && r->busbw_GBps < largest->busbw_GBps)) {
      largest = r;
    }
    if (best == nullptr || r->busbw_GBps > best->busbw_GBps) {
      best = r;
    }
  }
  nlohmann::ordered_json g = {{"run", s.run->name()},       {"file", s.run->path}, {"benchmark", s.key.benchmark},
                              {"backend", s.key.backend},   {"op", s.key.op},      {"dtype", s.key.dtype},
                              {"group_id", s.key.group_id}, {"ranks", s.key.ranks}};
  g["largest_size_bytes"] = largest != nullptr ? nlohmann::ordered_json(largest->size_bytes) : nullptr;
  g["busbw_at_largest_GBps"] = largest != nullptr ? nlohmann::ordered_json(largest->busbw_GBps) : nullptr;
  g["pct_of_peak_at_largest"] = largest != nullptr ? detail::number_or_null(largest->pct_of_peak) : nullptr;
  g["max_busbw_GBps"] = best != nullptr ? nlohmann::ordered_json(best->busbw_GBps) : nullptr;
  g["max_busbw_size_bytes"] = best != nullptr ? nlohmann::ordered_json(best->size_bytes) : nullptr;
  g["wrong_elements"] = wrong;
  g["cases"] = statuses;
  return g;
}

}  // namespace

namespace detail {

std::string TerminalRenderer::render(const TableModel& tables) const {
  return render_text(tables.sections, false, m_colour);
}

std::string MarkdownRenderer::render(const TableModel& tables) const {
  return render_text(tables.sections, true, false);
}

std::string CsvRenderer::render(const TableModel& tables) const {
  std::vector<nlohmann::ordered_json> records;
  for (const auto& s : tables.sections) {
    for (const auto* r : s.cases) {
      records.push_back(flat_row(*s.run, *r));
    }
  }
  return csv_of(records);
}

std::string JsonRenderer::render(const TableModel& tables) const {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& s : tables.sections) {
    groups.push_back(group_digest(s));
    for (const auto* r : s.cases) {
      rows.push_back(flat_row(*s.run, *r));
    }
  }
  nlohmann::ordered_json doc = {
      {"schema", "ccbench.report.table"}, {"schema_version", "1.1.0"}, {"groups", groups}, {"rows", rows}};
  // 1.1.0: each run's fabric findings (result schema 1.8.0), where it has any
  nlohmann::ordered_json fabric = nlohmann::ordered_json::array();
  nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
  const LoadedRun* last = nullptr;
  for (const auto& s : tables.sections) {
    if (s.run == last) {
      continue;
    }
    last = s.run;
    if (auto findings = fabric_findings(s.run->doc.fabric); !findings.empty()) {
      fabric.push_back({{"run", s.run->name()}, {"file", s.run->path}, {"findings", findings}});
    }
    if (auto findings = straggler_findings(s.run->doc); !findings.empty()) {
      per_rank.push_back({{"run", s.run->name()}, {"file", s.run->path}, {"findings", findings}});
    }
  }
  if (!fabric.empty()) {
    doc["fabric"] = std::move(fabric);
  }
  if (!per_rank.empty()) {  // 1.1.0: --per-rank runs' straggler verdicts
    doc["per_rank"] = std::move(per_rank);
  }
  return doc.dump(2) + "\n";
}

}  // namespace detail

}  // namespace ccbench::report
