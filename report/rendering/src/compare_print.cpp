// compare's printers: terminal, Markdown, CSV, JSON.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ccbench/report/compare.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/report/verdict_text.hpp"
#include "records.hpp"
#include "renderers.hpp"
#include "text_table.hpp"

namespace ccbench::report {

namespace {

using detail::Align;
using detail::Cell;
using detail::TextTable;

const char* verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::Same:
      return nullptr;
    case Verdict::Faster:
      return "32";
    case Verdict::Slower:
    case Verdict::Failed:
      return "31";
    case Verdict::Unsure:
      return "33";
  }
  return nullptr;
}

std::string pct_text(std::optional<double> v) { return v ? detail::pct_change(*v) : "-"; }

RowKey section_key(RowKey key) {
  key.size_bytes = 0;
  key.in_place = false;
  return key;
}

std::string section_title(const RowKey& k) {
  return fmt::format("{} {} {} {}{}{} {}{} group {} ({} ranks)", printable(k.benchmark), k.op, k.dtype, k.redop,
                     k.root >= 0 ? fmt::format(" root {}", k.root) : "", "", k.timing,
                     k.variant.empty() ? "" : " " + printable(k.variant), printable(k.group_id), k.ranks);
}

using Sections = std::map<RowKey, std::vector<const RowComparison*>>;

/// The rows of a comparison by section (bench, op, dtype, group: everything but size and placement).
Sections sections_of(const Comparison& c) {
  Sections sections;
  for (const auto& r : c.rows) {
    sections[section_key(r.key)].push_back(&r);
  }
  return sections;
}

/// Whether a section's table shows each side's %peak and the ratios (the peaks differ, and some row knows both).
bool shows_spec(const std::vector<const RowComparison*>& rows, const Comparison& c) {
  return c.against_spec &&
         std::any_of(rows.begin(), rows.end(), [](const auto* r) { return r->spec_ratio.has_value(); });
}

TextTable section_table(const std::vector<const RowComparison*>& rows, const Comparison& c, bool spec) {
  std::vector<detail::Column> cols = {
      {"size"}, {"placement", Align::Left}, {c.label_a + " busbw"}, {c.label_b + " busbw"}};
  if (spec) {
    cols.insert(cols.end(), {{c.label_a + " %peak"}, {c.label_b + " %peak"}, {"measured B/A"}, {"spec B/A"}});
  }
  const std::string ci_title = c.launches_a > 0 ? fmt::format("{:.4g}% CI", c.row_confidence * 100.0) : "95% CI";
  cols.insert(cols.end(),
              {{spec ? "change of %peak" : "change"}, {ci_title}, {"verdict", Align::Left}, {"why", Align::Left}});
  for (auto& col : cols) {
    col.title = printable(col.title);
  }
  TextTable table(cols);
  for (const auto* r : rows) {
    std::vector<Cell> row = {{format_size(r->key.size_bytes, SizeStyle::Binary)},
                             {std::string(placement_name(r->key.in_place))},
                             {format_number(r->base->busbw_GBps, 2)},
                             {format_number(r->cand->busbw_GBps, 2)}};
    if (spec) {
      row.insert(row.end(), {{format_number(r->base->pct_of_peak, 1)},
                             {format_number(r->cand->pct_of_peak, 1)},
                             {format_number(r->measured_ratio, 3)},
                             {format_number(r->spec_ratio, 3)}});
    }
    const auto ci = r->change ? fmt::format("{}..{}", pct_text(r->change->lo), pct_text(r->change->hi)) : "-";
    row.insert(row.end(), {{pct_text(r->change ? std::optional(r->change->estimate) : std::nullopt)},
                           {ci},
                           {std::string(name(r->verdict)), verdict_colour(r->verdict)},
                           {printable(r->why)}});
    table.add_row(std::move(row));
  }
  return table;
}

}  // namespace

std::string summary_line(const Comparison& c) {
  std::map<Verdict, int> counts;
  for (const auto& r : c.rows) {
    ++counts[r.verdict];
  }
  return fmt::format(
      "{} rows compared: {} SAME, {} FASTER, {} SLOWER, {} UNSURE, {} FAILED; {} MISSING from {}, {} only in "
      "{}, {} skipped on both sides",
      c.rows.size(), counts[Verdict::Same], counts[Verdict::Faster], counts[Verdict::Slower], counts[Verdict::Unsure],
      counts[Verdict::Failed], c.only_base.size(), printable(c.label_b), c.only_cand.size(), printable(c.label_b),
      c.skipped.size());
}

namespace {}  // namespace

std::string interval_text(const Comparison& c) {
  if (c.launches_a == 0) {
    return "95% CI (Hodges-Lehmann on raw samples, else from the medians' CIs)";
  }
  return fmt::format(
      "CI between launches (each launch contributes its median; {}), {:.4g}% a row: the false-alarm rate held at "
      "{:.4g}% over the {} rows given one",
      c.paired ? fmt::format("{} interleaved pairs", c.launches_a)
               : fmt::format("{} launch(es) of A, {} of B", c.launches_a, c.launches_b),
      c.row_confidence * 100.0, (1.0 - c.row_confidence) * static_cast<double>(c.family_rows) * 100.0, c.family_rows);
}

namespace {

std::string render_text(const Comparison& c, bool markdown, bool colour) {
  const std::string lead = markdown ? "" : "# ";
  const auto md = [markdown](const std::string& text) { return markdown ? html_escape(text) : text; };
  std::string out = fmt::format(
      "{}compare: A = {} (base), B = {} (candidate)\n"
      "{}change = B/A - 1 of median busbw{}, with its {}; SLOWER/FASTER: CI excludes 0 and |change| > {:.0f}%; "
      "SAME: CI within ±{:.0f}% or a real change below it; UNSURE: too few samples (< {}){} or too noisy\n\n",
      lead, md(printable(c.label_a)), md(printable(c.label_b)), lead,
      c.against_spec ? " (of busbw / peak where the peaks differ: each side against its own spec)" : "",
      interval_text(c), c.threshold * 100.0, c.threshold * 100.0, c.min_samples,
      c.launches_a > 0 ? ", too few launches" : "");
  for (const auto& [key, rows] : sections_of(c)) {
    const auto table = section_table(rows, c, shows_spec(rows, c));
    out += markdown ? "### " + html_escape(section_title(key)) + "\n\n" + table.markdown()
                    : "# " + section_title(key) + "\n" + table.terminal(colour);
    out += "\n";
  }
  const auto list = [&](const std::vector<RowKey>& keys, const std::string& what) {
    for (const auto& k : keys) {
      out += fmt::format("{}{}: {}\n", markdown ? "- " : "# ", what,
                         markdown ? html_escape(describe(k)) : printable(describe(k)));
    }
  };
  list(c.only_base, "MISSING from " + printable(c.label_b) + " (only in " + printable(c.label_a) + ")");
  list(c.only_cand, "only in " + printable(c.label_b));
  out += lead + md(summary_line(c)) + "\n";
  return out;
}

}  // namespace

std::string render_compare_html(const Comparison& c, const std::string& title) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>{}</title>\n<style>\n"
      "body {{ font-family: sans-serif; margin: 1.5em; }} table {{ border-collapse: collapse; margin-bottom: 1.5em; "
      "}}\n"
      "th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; }} td.num {{ text-align: right; }}\n"
      "p.note {{ color: #555; }}\n</style>\n</head>\n<body>\n<h1>{}</h1>\n"
      "<p>A = {} (base), B = {} (candidate).</p>\n<p class=\"note\">change = B/A - 1 of median busbw{}, with its {}"
      "; SLOWER/FASTER: CI excludes 0 and |change| &gt; {:.0f}%; SAME: CI within &plusmn;{:.0f}% or a real change "
      "below it; UNSURE: fewer than {} samples or too noisy. %peak: each side's busbw against its own spec peak; "
      "measured B/A beside spec B/A.</p>\n",
      html_escape(title), html_escape(title), html_escape(c.label_a), html_escape(c.label_b),
      c.against_spec ? " (of busbw / peak where the peaks differ: each side against its own spec)" : "",
      html_escape(interval_text(c)), c.threshold * 100.0, c.threshold * 100.0, c.min_samples);
  for (const auto& [key, rows] : sections_of(c)) {
    std::set<std::string> bases;
    for (const auto* r : rows) {
      bases.insert(r->base->peak_basis);
      bases.insert(r->cand->peak_basis);
    }
    out += "<h2>" + html_escape(section_title(key)) + "</h2>\n" + section_table(rows, c, shows_spec(rows, c)).html();
    for (const auto& b : bases) {
      out += b.empty() ? "" : "<p class=\"note\">peak: " + html_escape(b) + "</p>\n";
    }
  }
  out += fmt::format("<p>{}</p>\n</body>\n</html>\n", html_escape(summary_line(c)));
  return out;
}

namespace {

nlohmann::ordered_json key_json(const RowKey& k) {
  nlohmann::ordered_json j = {
      {"benchmark", k.benchmark}, {"backend", k.backend},       {"timing", k.timing},    {"op", k.op},
      {"dtype", k.dtype},         {"redop", k.redop},           {"root", k.root},        {"ranks", k.ranks},
      {"group_id", k.group_id},   {"size_bytes", k.size_bytes}, {"in_place", k.in_place}};
  if (!k.variant.empty()) {  // --nccl-variants rows only
    j["variant"] = k.variant;
  }
  return j;
}

nlohmann::ordered_json row_json(const RowComparison& r) {
  auto j = key_json(r.key);
  j["base_busbw_GBps"] = r.base->busbw_GBps;
  j["cand_busbw_GBps"] = r.cand->busbw_GBps;
  j["base_pct_of_peak"] = detail::number_or_null(r.base->pct_of_peak);
  j["cand_pct_of_peak"] = detail::number_or_null(r.cand->pct_of_peak);
  j["measured_ratio"] = detail::number_or_null(r.measured_ratio);
  j["spec_ratio"] = detail::number_or_null(r.spec_ratio);
  j["against_spec"] = r.against_spec;
  j["change"] = detail::number_or_null(r.change ? std::optional(r.change->estimate) : std::nullopt);
  j["change_ci95_lo"] = detail::number_or_null(r.change ? std::optional(r.change->lo) : std::nullopt);
  j["change_ci95_hi"] = detail::number_or_null(r.change ? std::optional(r.change->hi) : std::nullopt);
  j["method"] = r.method;
  j["verdict"] = name(r.verdict);
  j["why"] = r.why;
  return j;
}

}  // namespace

namespace detail {

std::string TerminalRenderer::render(const Comparison& comparison) const {
  return render_text(comparison, false, m_colour);
}

std::string MarkdownRenderer::render(const Comparison& comparison) const {
  return render_text(comparison, true, false);
}

std::string CsvRenderer::render(const Comparison& c) const {
  std::vector<nlohmann::ordered_json> records;
  records.reserve(c.rows.size());
  for (const auto& r : c.rows) {
    records.push_back(row_json(r));
  }
  return csv_of(records);
}

std::string JsonRenderer::render(const Comparison& c) const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : c.rows) {
    rows.push_back(row_json(r));
  }
  const auto keys = [](const std::vector<RowKey>& ks) {
    auto a = nlohmann::ordered_json::array();
    for (const auto& k : ks) {
      a.push_back(key_json(k));
    }
    return a;
  };
  std::map<Verdict, int> verdicts;
  for (const auto& r : c.rows) {
    ++verdicts[r.verdict];
  }
  // what a script reads (ccbench-report get FILE /counts/slower): the summary line's figures
  const nlohmann::ordered_json counts = {{"rows", c.rows.size()},
                                         {"same", verdicts[Verdict::Same]},
                                         {"faster", verdicts[Verdict::Faster]},
                                         {"slower", verdicts[Verdict::Slower]},
                                         {"unsure", verdicts[Verdict::Unsure]},
                                         {"failed", verdicts[Verdict::Failed]},
                                         {"missing", c.only_base.size()},
                                         {"only_b", c.only_cand.size()},
                                         {"skipped", c.skipped.size()}};
  const nlohmann::ordered_json doc = {{"schema", "ccbench.report.compare"},
                                      {"schema_version", "1.2.0"},
                                      {"label_a", c.label_a},
                                      {"label_b", c.label_b},
                                      {"threshold", c.threshold},
                                      {"min_samples", c.min_samples},
                                      {"interval", interval_text(c)},
                                      {"ci_level", c.launches_a > 0 ? c.row_confidence : 0.95},
                                      {"launches_a", c.launches_a},
                                      {"launches_b", c.launches_b},
                                      {"paired", c.paired},
                                      {"regression", c.any_regression() || c.any_missing()},
                                      {"counts", counts},
                                      {"rows", rows},
                                      {"only_a", keys(c.only_base)},
                                      {"only_b", keys(c.only_cand)},
                                      {"skipped", keys(c.skipped)}};
  return doc.dump(2) + "\n";
}

}  // namespace detail

}  // namespace ccbench::report
