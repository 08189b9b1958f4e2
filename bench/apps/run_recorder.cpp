#include "run_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ccbench/environment.hpp"

namespace ccbench {

std::string op_activity(std::string_view op, std::uint64_t size, bool in_place, const std::string& group) {
  return fmt::format("{} {} B {} in group {}", op, size, in_place ? "in-place" : "out-of-place", group);
}

RunRecorder::RunRecorder(std::string op, double timeout_s, CaseMaker make_case, Absent absent)
    : m_op(std::move(op)), m_timeout_s(timeout_s), m_make_case(std::move(make_case)), m_absent(std::move(absent)) {}

void RunRecorder::open(ResultDocument doc, std::vector<std::unique_ptr<ResultSink>> sinks) {
  const std::lock_guard lock(m_mutex);
  m_doc = std::move(doc);
  m_sinks = std::move(sinks);
}

void RunRecorder::begin(const TableHeader& header) {
  emit([&](ResultSink& sink) { sink.begin(header); });
}

void RunRecorder::note(const std::string& text) {
  emit([&](ResultSink& sink) { sink.note(text); });
}

void RunRecorder::at(const std::vector<GroupPlan>& groups, std::uint64_t size, bool in_place) {
  const std::lock_guard lock(m_mutex);
  m_position = Position{&groups, size, in_place, {}};
}

void RunRecorder::between_cases() {
  const std::lock_guard lock(m_mutex);
  m_position.reset();
}

void RunRecorder::record(CaseResult result) {
  const std::lock_guard lock(m_mutex);
  m_doc.results.push_back(std::move(result));
}

void RunRecorder::fabric(std::vector<HostFabric> hosts) {
  const std::lock_guard lock(m_mutex);
  m_doc.fabric = std::move(hosts);
}

void RunRecorder::size_done(const std::vector<CaseResult>& rows) {
  emit([&](ResultSink& sink) { sink.size_done(m_doc, rows); });
}

bool RunRecorder::end() {
  const std::lock_guard lock(m_mutex);
  m_position.reset();
  if (m_closed) {
    return false;
  }
  m_doc.run.ended_utc = utc_now_iso8601();
  for (const auto& sink : m_sinks) {
    sink->end(m_doc);
  }
  return true;
}

void RunRecorder::record_hang(const Hang& hang) {
  const std::lock_guard lock(m_mutex);
  if (!m_position || m_closed) {
    return;  // still setting up, or between cases: no case to mark
  }
  // A group's case timed out when one of its ranks did not answer the roll call, or when the rank that waited
  // out --timeout was in that case (its op, or the memory check before it). A rank that answered from inside
  // its op is not enough: a group still measuring is in its op too, and must not be marked for another's hang.
  const auto in_op = [&](const GroupPlan& g, int rank) {
    const bool silent = std::find(hang.silent.begin(), hang.silent.end(), rank) != hang.silent.end();
    const std::string op = op_activity(m_op, m_position->size, m_position->in_place, g.id);
    return silent || (rank == hang.reporter && (hang.activity == op || hang.activity.starts_with(op + " (")));
  };
  auto& done = m_position->timed_out;
  for (const auto& g : *m_position->groups) {
    if (std::find(done.begin(), done.end(), g.id) != done.end() ||
        std::none_of(g.ranks.begin(), g.ranks.end(), [&](int rank) { return in_op(g, rank); })) {
      continue;
    }
    CaseResult r = m_make_case(g, m_position->size, m_position->in_place);
    r.status = CaseStatus::TimedOut;
    r.reason = fmt::format("no progress for {:.1f} s (--timeout {:g}); {}", hang.waited_s, m_timeout_s, m_absent(hang));
    m_doc.results.push_back(std::move(r));
    done.push_back(g.id);
  }
  if (m_doc.results.empty()) {
    return;  // a document without results is not a valid one
  }
  m_doc.run.ended_utc = utc_now_iso8601();
  for (const auto& sink : m_sinks) {
    sink->hang(m_doc);
  }
  m_closed = true;  // the job ends now: the writer lets go of the result path next (HangGuard)
}

}  // namespace ccbench
