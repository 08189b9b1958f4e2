#pragma once
// World rank 0's record of a run: the result document, the sinks it goes to, and the case every group is
// measuring, under one lock, because a hang is recorded from the hang guard's thread while the main thread
// may be blocked anywhere.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/groups.hpp"
#include "ccbench/result.hpp"
#include "ccbench/table_printer.hpp"
#include "hang_guard.hpp"
#include "result_sinks.hpp"

namespace ccbench {

/// What the hang guard shows for a case in progress: "allreduce 1024 B in-place in group g0".
std::string op_activity(std::string_view op, std::uint64_t size, bool in_place, const std::string& group);

class RunRecorder {
 public:
  /// The result of `group`'s case at `size` and placement, as the session builds every result (a timed-out
  /// case starts from it). Called from the hang guard's thread, under the recorder's lock.
  using CaseMaker = std::function<CaseResult(const GroupPlan& group, std::uint64_t size, bool in_place)>;
  /// Names the ranks a hang left absent (HangGuard::absent).
  using Absent = std::function<std::string(const Hang&)>;

  RunRecorder(std::string op, double timeout_s, CaseMaker make_case, Absent absent);

  /// Before the first case: the document with its run and environment, and its sinks in the order they get
  /// every event (they never change after).
  void open(ResultDocument doc, std::vector<std::unique_ptr<ResultSink>> sinks);
  void begin(const TableHeader& header);
  /// A line between two sweeps (a round's estimate, --nccl-variants).
  void note(const std::string& text);
  /// The case every group of `groups` is measuring now (`groups` outlives the case). What a CaseMaker reads
  /// of its session may change only between between_cases() and the next at().
  void at(const std::vector<GroupPlan>& groups, std::uint64_t size, bool in_place);
  void between_cases();
  void record(CaseResult result);
  /// Every host's fabric evidence, before end().
  void fabric(std::vector<HostFabric> hosts);
  /// One size is measured in every group: its `rows` are in the document.
  void size_done(const std::vector<CaseResult>& rows);
  /// The run is over: the document is completed and every sink ends. False when a hang was recorded
  /// first (the job is being ended, nothing more is written).
  bool end();

  /// From the hang guard's thread: marks the case in progress timed out for every group the hang
  /// involves, and writes; after it nothing is written.
  void record_hang(const Hang& hang);

 private:
  /// One event to every sink, in order: those that read the document under the lock, then the others
  /// outside it, so a blocked terminal never holds up the recording of a hang.
  template <typename Event>
  void emit(const Event& event) {
    {
      const std::lock_guard lock(m_mutex);
      if (m_closed) {
        return;
      }
      for (const auto& sink : m_sinks) {
        if (sink->reads_document()) {
          event(*sink);
        }
      }
    }
    for (const auto& sink : m_sinks) {
      if (!sink->reads_document()) {
        event(*sink);
      }
    }
  }

  struct Position {
    const std::vector<GroupPlan>* groups = nullptr;
    std::uint64_t size = 0;
    bool in_place = false;
    std::vector<std::string> timed_out;  // groups already recorded as timed out here
  };

  std::string m_op;
  double m_timeout_s;
  CaseMaker m_make_case;
  Absent m_absent;
  std::mutex m_mutex;  // everything below
  ResultDocument m_doc;
  std::vector<std::unique_ptr<ResultSink>> m_sinks;
  std::optional<Position> m_position;
  bool m_closed = false;  // a hang was recorded: the document is final
};

}  // namespace ccbench
