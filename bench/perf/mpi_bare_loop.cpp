// Bare MPI loops with no ccbench runner in them: the peers that scripts/fidelity.sh holds the
// MPI backend against. Two modes:
//
//   mpirun -np 2 build/bench/perf/mpi_bare_loop osu COLLECTIVE [MIN_BYTES MAX_BYTES FACTOR]
//     all_reduce, all_gather or sendrecv over a size sweep, timed as OSU's micro-benchmarks
//     time: untimed warm-up ops, then N ops back to back between barriers; the per-op time is
//     the elapsed time over N, averaged over the ranks. One line per size: "S us".
//
//   mpirun -np 2 build/bench/perf/mpi_bare_loop paired COLLECTIVE MIN_BYTES MAX_BYTES FACTOR ROUNDS
//     The same sweep, each size measured ROUNDS times by each side inside this one launch,
//     alternating which goes first: ccbench's runner on the MPI backend with its default
//     sampling (median of calibrated batches, MAX across ranks) and the OSU loop above. Both
//     see the same machine and the same library state, so what separates them is the method,
//     not a mode the machine or library was in for one launch. The OSU loop runs twice: as OSU
//     times it (the average over N ops) and with a timestamp after every op (the median op of
//     the same back-to-back stream). One line per size and round:
//     "S ROUND OURS_P50_US OURS_MEAN_US BARE_US BARE_OP_P50_US".
//
//   mpirun -np 2 build/bench/perf/mpi_bare_loop imb
//     An emulation of IMB-MPI1 Allreduce's default schedule (IMB is not installed here): float
//     sizes 0 and 4 B .. 4 MiB in powers of two; repetitions min(1000, 40 MiB / size), cut by
//     the dynamic iteration policy to what fits 10 s; 10% of them as warm-up. One line per size
//     "S reps us", then "wall_s" for the whole schedule.
//
// Sizes are ccbench's S (README, "Bus bandwidth"): the count comes from the same table the MPI
// backend uses, so both sides move the same bytes.
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/mpi/mpi_backend.hpp"
#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/statistics.hpp"

namespace {

using ccbench::Collective;

// Floats on page boundaries, as OSU allocates its buffers (and as the MPI backend does): where a
// buffer starts changes how fast the library copies it.
class PageAligned {
 public:
  PageAligned(std::uint64_t count, float value) {
    const std::uint64_t bytes = (count * sizeof(float) + kPage - 1) / kPage * kPage;
    m_data.reset(static_cast<float*>(std::aligned_alloc(kPage, bytes)));  // NOLINT(cppcoreguidelines-no-malloc)
    if (!m_data) {
      throw std::bad_alloc();
    }
    std::fill_n(m_data.get(), count, value);
  }
  [[nodiscard]] float* data() const { return m_data.get(); }

 private:
  static constexpr std::uint64_t kPage = 4096;
  struct Free {
    void operator()(float* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
  };
  std::unique_ptr<float, Free> m_data;
};

class Buffers {
 public:
  Buffers(Collective coll, std::uint64_t bytes, int nranks, int rank)
      : m_coll(coll),
        m_nranks(nranks),
        m_rank(rank),
        m_count(bytes == 0 ? 0 : ccbench::count_for_bytes(ccbench::info(coll), bytes, sizeof(float), nranks)),
        m_send(std::max<std::uint64_t>(ccbench::elements(ccbench::info(coll).send, m_count, nranks), 1), 1.0F),
        m_recv(std::max<std::uint64_t>(ccbench::elements(ccbench::info(coll).recv, m_count, nranks), 1), 0.0F) {}

  [[nodiscard]] std::uint64_t count() const { return m_count; }

  // The same calls, with the same arguments, as the MPI backend's out-of-place ops.
  void op() {
    const int n = static_cast<int>(m_count);
    switch (m_coll) {
      case Collective::AllReduce:
        MPI_Allreduce(m_send.data(), m_recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Collective::AllGather:
        MPI_Allgather(m_send.data(), n, MPI_FLOAT, m_recv.data(), n, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      default: {
        const int next = (m_rank + 1) % m_nranks;
        const int prev = (m_rank + m_nranks - 1) % m_nranks;
        MPI_Sendrecv(m_send.data(), n, MPI_FLOAT, next, 0, m_recv.data(), n, MPI_FLOAT, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        break;
      }
    }
  }

 private:
  Collective m_coll;
  int m_nranks;
  int m_rank;
  std::uint64_t m_count;
  PageAligned m_send;
  PageAligned m_recv;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds per op of `ops` ops back to back between barriers, this rank's view.
double timed_batch(Buffers& buffers, std::uint64_t ops) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now_s();
  for (std::uint64_t i = 0; i < ops; ++i) {
    buffers.op();
  }
  const double per_op = (now_s() - start) / static_cast<double>(std::max<std::uint64_t>(ops, 1));
  MPI_Barrier(MPI_COMM_WORLD);
  return per_op;
}

double reduce(double value, MPI_Op op) {
  double out = 0.0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return out;
}

// OSU's defaults: 1000 timed ops after 200 warm-up ops, 100 after 10 above 8 KiB. Runs the
// warm-up and returns how many ops to time.
std::uint64_t osu_warm_up(Buffers& buffers, std::uint64_t bytes) {
  constexpr std::uint64_t kLargeMessage = 8192;
  const bool large = bytes > kLargeMessage;
  for (std::uint64_t i = 0, skip = large ? 10 : 200; i < skip; ++i) {
    buffers.op();
  }
  return large ? 100 : 1000;
}

// The per-op time as OSU takes it: N ops between barriers, averaged over the ranks.
double osu_per_op(Buffers& buffers, std::uint64_t bytes, int nranks) {
  const std::uint64_t ops = osu_warm_up(buffers, bytes);
  return reduce(timed_batch(buffers, ops), MPI_SUM) / nranks;
}

// The same loop with a timestamp after every op: the median per-op time of the back-to-back
// stream, averaged over the ranks. It separates a stream whose every op is slower from one whose
// average takes in a few slow ops (a timestamp costs tens of ns: it tells only at large sizes).
double osu_op_median(Buffers& buffers, std::uint64_t bytes, int nranks) {
  std::vector<double> stamps(osu_warm_up(buffers, bytes) + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  stamps[0] = now_s();
  for (std::size_t i = 1; i < stamps.size(); ++i) {
    buffers.op();
    stamps[i] = now_s();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> per_op(stamps.size() - 1);
  for (std::size_t i = 0; i < per_op.size(); ++i) {
    per_op[i] = stamps[i + 1] - stamps[i];
  }
  std::sort(per_op.begin(), per_op.end());
  return reduce(ccbench::percentile(per_op, 50), MPI_SUM) / nranks;
}

std::vector<std::uint64_t> sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = min_bytes; bytes <= max_bytes; bytes *= factor) {
    sizes.push_back(bytes);
  }
  return sizes;
}

void osu(Collective coll, std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor) {
  int rank = 0;
  int nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == 0) {
    fmt::print("# bare {} loop timed as OSU does: warm-up, N ops between barriers, per op averaged over {} ranks\n",
               ccbench::info(coll).name, nranks);
  }
  for (const std::uint64_t bytes : sweep(min_bytes, max_bytes, factor)) {
    Buffers buffers(coll, bytes, nranks, rank);
    if (buffers.count() == 0) {
      continue;  // below one element per rank: ccbench skips it too
    }
    const double per_op = osu_per_op(buffers, bytes, nranks);
    if (rank == 0) {
      fmt::print("{} {:.6f}\n", bytes, per_op * 1e6);
    }
  }
}

// ccbench's runner and the OSU loop on the same sizes in one launch, alternating which goes first.
void paired(Collective coll, std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor, int rounds) {
  ccbench::MpiGroup world(MPI_COMM_WORLD);
  const int rank = world.rank();
  const int nranks = world.size();
  auto backend = ccbench::make_mpi_backend(world);
  ccbench::Runner runner(world, *backend, ccbench::SamplingPolicy{});
  if (rank == 0) {
    fmt::print("# {} in one launch, {} ranks: ccbench's runner (default sampling) and the OSU loop alternating\n",
               ccbench::info(coll).name, nranks);
  }
  for (const std::uint64_t bytes : sweep(min_bytes, max_bytes, factor)) {
    Buffers buffers(coll, bytes, nranks, rank);
    if (buffers.count() == 0) {
      continue;
    }
    const ccbench::CaseSpec spec{coll, ccbench::DType::Float32, ccbench::ReduceOp::Sum, 0, false, buffers.count()};
    for (int r = 0; r < rounds; ++r) {
      ccbench::Summary ours;
      double bare = 0.0;
      double bare_op_p50 = 0.0;
      const auto run_ours = [&] {
        backend->prepare(spec);
        ours = ccbench::summarize(runner.measure(spec).samples_s);
      };
      const auto run_bare = [&] {
        bare = osu_per_op(buffers, bytes, nranks);
        bare_op_p50 = osu_op_median(buffers, bytes, nranks);
      };
      if (r % 2 == 0) {
        run_ours();
        run_bare();
      } else {
        run_bare();
        run_ours();
      }
      if (rank == 0) {
        fmt::print("{} {} {:.6f} {:.6f} {:.6f} {:.6f}\n", bytes, r, ours.p50 * 1e6, ours.mean * 1e6, bare * 1e6,
                   bare_op_p50 * 1e6);
      }
    }
  }
}

// IMB_settings.h: MSGSPERSAMPLE 1000, OVERALL_VOL 40 MiB, SECS_PER_SAMPLE 10, WARMUP_PERCENT 10,
// and the dynamic policy of IMB_init_buffers_iter: one op, then a probe sized to ~1 s, then the
// repetitions that fit SECS_PER_SAMPLE, never more than the previous size's.
void imb() {
  constexpr std::uint64_t kMsgsPerSample = 1000;
  constexpr std::uint64_t kOverallVol = 40ULL << 20;
  constexpr double kSecsPerSample = 10.0;
  constexpr std::uint64_t kMaxBytes = 4ULL << 20;
  int rank = 0;
  int nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == 0) {
    fmt::print("# an EMULATION of IMB-MPI1 Allreduce's default schedule (IMB itself is not installed here)\n");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now_s();
  std::uint64_t previous = kMsgsPerSample;
  std::vector<std::uint64_t> sizes = sweep(4, kMaxBytes, 2);
  sizes.insert(sizes.begin(), 0);
  for (const std::uint64_t bytes : sizes) {
    Buffers buffers(Collective::AllReduce, bytes, nranks, rank);
    const std::uint64_t selected =
        bytes == 0 ? kMsgsPerSample : std::min(kMsgsPerSample, std::max<std::uint64_t>(1, kOverallVol / bytes));
    double t = reduce(timed_batch(buffers, 1), MPI_MAX);
    const std::uint64_t rep_test = t < 1.0 / kMsgsPerSample ? kMsgsPerSample
                                   : t < 1.0                ? static_cast<std::uint64_t>(std::lround(1.0 / t))
                                                            : 1;
    if (const std::uint64_t probe = std::min(selected, rep_test); probe > 1) {
      t = reduce(timed_batch(buffers, probe), MPI_MAX);
    }
    const auto fits = t > 1e-8 ? static_cast<std::uint64_t>(1.0 + kSecsPerSample / t) : selected;
    const std::uint64_t reps = std::min({selected, previous, fits});
    previous = reps;
    for (std::uint64_t i = 0, warm = std::max<std::uint64_t>(reps / 10, 1); i < warm; ++i) {
      buffers.op();
    }
    const double per_op = reduce(timed_batch(buffers, reps), MPI_SUM) / nranks;
    if (rank == 0) {
      fmt::print("{} {} {:.6f}\n", bytes, reps, per_op * 1e6);
    }
  }
  const double wall = reduce(now_s() - start, MPI_MAX);
  if (rank == 0) {
    fmt::print("wall_s {:.6f}\n", wall);
  }
}

int usage() {
  fmt::print(stderr,
             "usage: mpi_bare_loop osu all_reduce|all_gather|sendrecv [MIN MAX FACTOR]\n"
             "       mpi_bare_loop paired all_reduce|all_gather|sendrecv MIN MAX FACTOR ROUNDS\n"
             "       mpi_bare_loop imb\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ccbench::MpiContext mpi(argc, argv);
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "imb") {
    imb();
    return 0;
  }
  const bool is_paired = args.size() == 6 && args[0] == "paired";
  if (!is_paired && ((args.size() != 2 && args.size() != 5) || args[0] != "osu")) {
    return usage();
  }
  const auto coll = ccbench::parse_collective(args[1]);
  if (!coll || (*coll != Collective::AllReduce && *coll != Collective::AllGather && *coll != Collective::SendRecv)) {
    return usage();
  }
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 4ULL << 20;
  std::uint64_t factor = 4;
  if (args.size() >= 5) {
    min_bytes = std::strtoull(argv[3], nullptr, 10);
    max_bytes = std::strtoull(argv[4], nullptr, 10);
    factor = std::strtoull(argv[5], nullptr, 10);
    if (min_bytes == 0 || factor < 2) {
      return usage();
    }
  }
  if (is_paired) {
    const int rounds = std::atoi(argv[6]);
    if (rounds < 1) {
      return usage();
    }
    paired(*coll, min_bytes, max_bytes, factor, rounds);
    return 0;
  }
  osu(*coll, min_bytes, max_bytes, factor);
  return 0;
}
