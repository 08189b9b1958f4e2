// The verbs backend's timed samples: the timer, ib_write_bw's streams of writes and ib_write_lat's round trips.
#include <algorithm>
#include <chrono>
#include <span>

#include "verbs_backend_impl.hpp"

namespace ccbench::verbs_detail {

void VerbsTimer::start() { m_backend.start_sample(); }

double VerbsTimer::stop() { return m_backend.end_sample(); }

double VerbsBackend::end_sample() {
  wait();
  const double elapsed = std::chrono::duration<double>(Clock::now() - m_sample_start).count();
  if (m_lat) {
    return m_pair.rank() == 0 ? elapsed / 2.0 : 0.0;  // one way; the answering side's clock says nothing
  }
  return writes() ? elapsed : 0.0;
}

// ib_write_bw's samples as perftest takes its run: `per_op_s.size()` samples of `ops` writes posted back to back
// with --tx-depth in flight, each sample the time between the completion that ends the one before it (the first:
// the first post) and its own last write's completion. Only the stream's first sample pays the link's ramp-up,
// and the drain comes once, after the last; the ranks do not meet between samples. The side that only receives
// reports zeros (the runner takes the MAX across ranks).
void VerbsBackend::stream_samples(std::uint64_t ops, std::span<double> per_op_s) {
  std::fill(per_op_s.begin(), per_op_s.end(), 0.0);
  if (m_lat) {
    stream_round_trips(ops, per_op_s);
    return;
  }
  if (!writes() || per_op_s.empty() || ops == 0) {
    return;
  }
  const std::uint64_t total = ops * per_op_s.size();
  const std::uint64_t done_before = completed();
  std::uint64_t posted = 0;
  std::size_t next_sample = 0;
  const Clock::time_point start = Clock::now();
  Clock::time_point last = start;
  // Every sample whose last write is complete ends now. Completions can come in bursts (Soft-RoCE's threads
  // report several at once): samples that end in the same poll share the time since the last one ended.
  const auto stamp = [&] {
    const std::uint64_t done = completed() - done_before;
    std::size_t ended = next_sample;
    while (ended < per_op_s.size() && done >= (ended + 1) * ops) {
      ++ended;
    }
    if (ended == next_sample) {
      return;
    }
    const Clock::time_point now = Clock::now();
    const double each =
        std::chrono::duration<double>(now - last).count() / static_cast<double>((ended - next_sample) * ops);
    std::fill(per_op_s.begin() + static_cast<std::ptrdiff_t>(next_sample),
              per_op_s.begin() + static_cast<std::ptrdiff_t>(ended), each);
    next_sample = ended;
    last = now;
  };
  Clock::time_point progress = start;
  std::uint64_t idle = 0;
  while (next_sample < per_op_s.size()) {
    if (posted < total && in_flight(m_next_qp) < static_cast<std::uint64_t>(m_tx_depth)) {
      ++posted;
      // A sample's last write says when it is complete; so does each QP's last, so that nothing stays unknown.
      post_data_write(m_next_qp, posted % ops == 0 || posted + m_qps.size() > total);
      continue;
    }
    if (reap_some() > 0) {
      stamp();
      progress = Clock::now();
      idle = 0;
    } else if ((++idle & 0xfffU) == 0) {
      check_deadline(progress, "completion");
    }
  }
  m_run_writes += total;
  m_run_s += std::chrono::duration<double>(last - start).count();
}

// ib_write_lat's samples as perftest takes its iterations: `per_op_s.size()` samples of `ops` round trips played
// back to back, each sample half the time from the end of the one before to its own last answer. One untimed
// round trip comes first: the two sides leave the barrier before the stream at different times, and the first
// ping would wait for the late side to start answering. The answering side plays along and reports zeros.
void VerbsBackend::stream_round_trips(std::uint64_t ops, std::span<double> per_op_s) {
  enqueue();
  Clock::time_point last = Clock::now();
  for (double& sample : per_op_s) {
    for (std::uint64_t i = 0; i < ops; ++i) {
      enqueue();
    }
    const Clock::time_point now = Clock::now();
    if (m_pair.rank() == 0) {
      sample = std::chrono::duration<double>(now - last).count() / 2.0 / static_cast<double>(ops);
    }
    last = now;
  }
}

}  // namespace ccbench::verbs_detail
