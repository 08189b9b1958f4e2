// Overhead of the harness: ccbench's 8-byte all-reduce median (MPI backend, batch timing)
// against a bare MPI_Allreduce loop timed the same way (barrier, host clock around k ops,
// per-op time, MAX across ranks per sample, median). Rounds alternate which goes first.
//
//   mpirun -np 2 build/bench/perf/allreduce_overhead [rounds] [samples]
//
// Prints each round and the median ratio; the target is <= 1.10.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "ccbench/mpi/mpi_backend.hpp"
#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/runner.hpp"
#include "ccbench/statistics.hpp"

namespace {

using ccbench::Collective;

constexpr int kCount = 2;  // 2 x float32 = 8 bytes
const ccbench::CaseSpec kSpec{Collective::AllReduce, ccbench::DType::Float32, ccbench::ReduceOp::Sum, 0, false, kCount};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return ccbench::percentile(v, 50);
}

double bare_loop(ccbench::Group& group, std::uint64_t ops, std::uint64_t samples) {
  std::vector<float> in(kCount, 1.0F);
  std::vector<float> out(kCount, 0.0F);
  std::vector<double> times(samples);
  for (double& t : times) {
    group.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < ops; ++i) {
      MPI_Allreduce(in.data(), out.data(), kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(ops);
  }
  group.max_all(times);
  return median_of(times);
}

double ccbench_loop(ccbench::MpiGroup& group, ccbench::Backend& backend, std::uint64_t ops, std::uint64_t samples) {
  ccbench::SamplingPolicy policy;
  policy.batch_ops = ops;
  policy.fixed_samples = samples;
  policy.warmup_iters = 5;
  ccbench::Runner runner(group, backend, policy);
  return median_of(runner.measure(kSpec).samples_s);
}

}  // namespace

int main(int argc, char** argv) {
  ccbench::MpiContext mpi(argc, argv);
  ccbench::MpiGroup world(MPI_COMM_WORLD);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::uint64_t samples = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  auto backend = ccbench::make_mpi_backend(world);
  backend->prepare(kSpec);
  // The same batch for both, from a bare warm-up.
  const double warm = bare_loop(world, 100, 20);
  const std::uint64_t ops = ccbench::batch_ops_for(warm);
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    double bare = 0;
    double ours = 0;
    if (r % 2 == 0) {
      bare = bare_loop(world, ops, samples);
      ours = ccbench_loop(world, *backend, ops, samples);
    } else {
      ours = ccbench_loop(world, *backend, ops, samples);
      bare = bare_loop(world, ops, samples);
    }
    ratios.push_back(ours / bare);
    if (world.rank() == 0) {
      fmt::print("round {}: bare MPI_Allreduce {:.3f} us, ccbench {:.3f} us, ratio {:.3f}\n", r, bare * 1e6, ours * 1e6,
                 ratios.back());
    }
  }
  if (world.rank() == 0) {
    fmt::print("8-byte all_reduce, {} ranks, {} ops per sample, {} samples per side per round\n", world.size(), ops,
               samples);
    fmt::print("median ratio ccbench / bare loop: {:.3f} (target <= 1.10)\n", median_of(ratios));
  }
  return 0;
}
