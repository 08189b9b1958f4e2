#pragma once
// The verbs backend's class (verbs_backend.cpp: the ctor and each case's buffer, pattern and check;
// verbs_setup.cpp: the device, queue pairs, buffer and connection; verbs_writes.cpp: writes posted and their
// completions reaped; verbs_sampling.cpp: timed writes and round trips). Private to the verbs backend.
#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ccbench/backend.hpp"
#include "ccbench/verbs/verbs_backend.hpp"
#include "ccbench/verbs/verbs_choice.hpp"
#include "verbs_device.hpp"
#if CCBENCH_VERBS_CUDA
#include "gpu_buffer.hpp"
#endif

#ifndef CCBENCH_IBVERBS_VERSION
#define CCBENCH_IBVERBS_VERSION "unknown"
#endif

namespace ccbench::verbs_detail {

using verbs::PeerInfo;

class VerbsBackend;

using Clock = std::chrono::steady_clock;

class VerbsTimer final : public Timer {
 public:
  explicit VerbsTimer(VerbsBackend& backend) : m_backend(backend) {}
  void start() override;
  double stop() override;
  [[nodiscard]] std::string clock() const override { return "host steady_clock"; }

 private:
  VerbsBackend& m_backend;
};

class VerbsBackend final : public Backend {
 public:
  VerbsBackend(Group& pair, const RunConfig& config, int world_rank, const std::string& host);

  [[nodiscard]] std::string name() const override { return "verbs"; }
  [[nodiscard]] std::map<std::string, std::string> versions() const override {
    return {{"verbs", loaded_verbs_version()},
            {"verbs_compiled", fmt::format("libibverbs {} (rdma-core)", CCBENCH_IBVERBS_VERSION)},
            {"rdma_device", m_device_text},
            {"rdma_buffer", m_buffer_text}};
  }
  [[nodiscard]] std::string device_bus_id() const override { return m_bus_id; }  // empty: host memory
  [[nodiscard]] Support supports(const CaseSpec& spec) const override;
  void prepare(const CaseSpec& spec) override;
  void fill_pattern() override;
  void enqueue() override;
  void wait() override;
  std::uint64_t count_wrong() override;
  Timer& timer() override { return m_timer; }
  [[nodiscard]] std::optional<RdmaInfo> rdma_info() const override;
  [[nodiscard]] bool streams(TimingMode timing) const override {
    return timing == TimingMode::Batch || (m_lat && timing == TimingMode::PerOp);
  }
  [[nodiscard]] std::uint64_t min_stream_ops() const override {
    return m_lat ? 1 : static_cast<std::uint64_t>(m_tx_depth) * m_qps.size();
  }
  void stream_samples(std::uint64_t ops, std::span<double> per_op_s) override;
  void stream_round_trips(std::uint64_t ops, std::span<double> per_op_s);

  /// ib_write_lat first plays one untimed round trip: the two sides leave the barrier before a
  /// sample at different times (over TCP, a wake-up apart: ~2 ms in the QEMU guest), and the
  /// first timed ping would wait for the late side to start answering. After it, both spin.
  void start_sample() {
    if (m_lat) {
      enqueue();
    }
    m_sample_start = Clock::now();
  }
  /// Seconds of this side's ops since start_sample(), the link drained (what the timer reports).
  [[nodiscard]] double end_sample();

 private:
  void open_device(const RunConfig& config);
  void create_queue_pairs(const RunConfig& config);
  void allocate_buffer(const RunConfig& config, std::size_t total, unsigned access);
  [[nodiscard]] ibv_mr* mr() const;
  [[nodiscard]] PeerInfo my_info(const RunConfig& config, int world_rank, const std::string& host) const;
  void connect(const PeerInfo& peer, std::optional<int> mtu);
  void post_write(std::size_t qp, std::uint32_t bytes, bool signaled, std::uint64_t covers);
  void post_data_write(std::size_t qp, bool signal_it);
  [[nodiscard]] std::uint64_t completed() const;
  [[nodiscard]] std::uint64_t in_flight(std::size_t qp) const { return m_posted[qp] - m_completed[qp]; }
  std::size_t reap_some();
  void reap(std::size_t min_completions);
  void check_deadline(std::chrono::steady_clock::time_point since, std::string_view what) const;
  void wait_for_byte(std::uint8_t value);
  [[nodiscard]] bool writes() const { return m_pair.rank() == 0 || m_bidir; }
  [[nodiscard]] bool receives() const { return m_pair.rank() == 1 || m_bidir; }
  // Host or device addresses (--mem): the CPU touches them only when m_gpu is empty.
  [[nodiscard]] std::uint8_t* send_half() const { return m_base; }
  [[nodiscard]] std::uint8_t* recv_half() const { return m_base + m_half; }

  Group& m_pair;
  const bool m_lat;
  const bool m_bidir;
  const double m_timeout_s;
  const int m_port;
  std::uint64_t m_half = 0;  // bytes of each half of the buffer: the largest size
  std::unique_ptr<std::uint8_t, FreeDeleter> m_buffer;
  // Declared in creation order: destroyed QPs first, the context last.
  Context m_ctx;
  ProtectionDomain m_pd;
  MemoryRegion m_mr;  // host memory's
#if CCBENCH_VERBS_CUDA
  std::unique_ptr<verbs::GpuBuffer> m_gpu;  // --mem cuda:N: the buffer and its registration
#endif
  std::uint8_t* m_base = nullptr;       // the buffer: send half, then receive half
  std::vector<std::uint8_t> m_staging;  // GPU memory: the pattern on its way in and the data on its way out
  std::string m_buffer_text = "host memory";
  std::string m_bus_id;       // the GPU's, for GPU memory
  std::string m_unsupported;  // why every case is skipped (GPU memory unusable on either side)
  CompletionQueue m_cq;
  std::vector<QueuePair> m_qps;
  PortFacts m_facts;
  std::optional<int> m_gid_index;
  ibv_gid m_gid{};
  std::string m_gid_type;
  std::string m_device;
  std::string m_device_text;
  int m_tx_depth = 1;
  int m_cq_mod = 1;
  int m_inline = 0;
  std::uint32_t m_psn = 0;
  PeerInfo m_peer;
  RdmaInfo m_info;
  VerbsTimer m_timer{*this};
  // The current case and the state of the writes in flight.
  CaseSpec m_spec;
  std::uint32_t m_bytes = 0;
  std::size_t m_next_qp = 0;
  std::vector<std::uint64_t> m_posted;           // per QP: writes posted, ever
  std::vector<std::uint64_t> m_completed;        // per QP: writes known complete, ever
  std::vector<std::uint64_t> m_since_signalled;  // per QP: posted since the last signalled write
  std::uint8_t m_seq = 0;                        // ib_write_lat: the marker of the current round trip
  Clock::time_point m_sample_start;
  std::uint64_t m_run_writes = 0;  // ib_write_bw: the writes of the measured streams, and their time
  double m_run_s = 0.0;
  std::uint64_t m_posted_writes = 0;  // every RDMA WRITE this side posted for the case, and its payload bytes
  std::uint64_t m_posted_bytes = 0;
};

}  // namespace ccbench::verbs_detail
