// gpu tier: the device pattern kernels against the host's pattern.cpp, bit for bit, for every element
// type and collective; the device count of wrong elements against corruption put there on purpose.
// Skipped (GTest skip) where there is no GPU; on a GPU machine whose CUDA cannot start, failed.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/cuda/device.hpp"
#include "ccbench/kernels.hpp"
#include "ccbench/pattern.hpp"

namespace ccbench {
namespace {

// No device is a skip; any other CUDA error fails the test (a GPU machine whose CUDA cannot start).
#define CCBENCH_REQUIRE_GPU()                                                    \
  do {                                                                           \
    const GpuProbe gpus = read_cuda_answer(cuda::ask());                         \
    if (!gpus.problem.empty()) {                                                 \
      GTEST_FAIL() << "a GPU machine whose CUDA cannot start: " << gpus.problem; \
    }                                                                            \
    if (gpus.count == 0) {                                                       \
      GTEST_SKIP() << "no CUDA device here";                                     \
    }                                                                            \
  } while (false)

void ok(cudaError_t e, const std::string& what) { ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e); }

class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes) {
    if (cudaMalloc(&m_ptr, bytes == 0 ? 1 : bytes) != cudaSuccess) {
      m_ptr = nullptr;
    }
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  DeviceBytes(DeviceBytes&&) = delete;
  DeviceBytes& operator=(DeviceBytes&&) = delete;
  ~DeviceBytes() { (void)cudaFree(m_ptr); }
  [[nodiscard]] void* get() const { return m_ptr; }

 private:
  void* m_ptr = nullptr;
};

TEST(GpuKernels, FillMatchesTheHostPatternForEveryTypeAndCollective) {
  CCBENCH_REQUIRE_GPU();
  for (const auto& row : all_collectives()) {
    for (const DType type : all_dtypes()) {
      for (const int n : {2, 8}) {
        const CaseSpec spec{row.id, type, ReduceOp::Sum, n - 1, false, 1000};
        const std::uint64_t count = elements(row.send, spec.count, n);
        const std::size_t bytes = count * size_of(type);
        const int rank = n - 1;
        std::vector<std::byte> host(bytes);
        fill_input(spec, n, rank, host.data());
        DeviceBytes device(bytes);
        ASSERT_NE(device.get(), nullptr);
        ok(kernels::fill_input(pattern_params(spec, n, rank), type, device.get(), count, nullptr), "fill_input");
        std::vector<std::byte> back(bytes);
        ok(cudaMemcpy(back.data(), device.get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
        EXPECT_EQ(std::memcmp(back.data(), host.data(), bytes), 0) << row.name << " " << name(type) << " n=" << n;
      }
    }
  }
}

TEST(GpuKernels, DeviceCountIsZeroOnTheExpectedOutputAndCountsEachCorruptedElement) {
  CCBENCH_REQUIRE_GPU();
  DeviceBytes counter(sizeof(unsigned long long));
  for (const auto& row : all_collectives()) {
    for (const DType type : all_dtypes()) {
      for (const ReduceOp op : all_reduce_ops()) {
        const int n = 4;
        const int rank = 1;
        const CaseSpec spec{row.id, type, op, rank, false, 4099};  // root = rank: reduce's output is checked;
                                                                   // odd count: the grid's tail is exercised
        const std::uint64_t count = elements(row.recv, spec.count, n);
        const std::size_t type_size = size_of(type);
        std::vector<std::byte> good(count * type_size);
        fill_expected(spec, n, rank, good.data());
        ASSERT_EQ(count_wrong(spec, n, rank, good.data()), 0U) << "the host check must accept it first";
        DeviceBytes device(good.size());
        const auto device_count = [&](const std::vector<std::byte>& bytes) {
          EXPECT_EQ(cudaMemcpy(device.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
          auto* c = static_cast<unsigned long long*>(counter.get());
          EXPECT_EQ(kernels::count_wrong(pattern_params(spec, n, rank), type, device.get(), count, c, nullptr),
                    cudaSuccess);
          unsigned long long wrong = 0;
          EXPECT_EQ(cudaMemcpy(&wrong, c, sizeof(wrong), cudaMemcpyDeviceToHost), cudaSuccess);
          return wrong;
        };
        const std::string what = std::string(row.name) + " " + std::string(name(type)) + " " + std::string(name(op));
        EXPECT_EQ(device_count(good), 0U) << what;
        std::vector<std::byte> bad = good;
        const std::vector<std::uint64_t> hit{0, count / 2, count - 1};
        for (const std::uint64_t i : hit) {
          bad[i * type_size] ^= std::byte{0x40};  // a changed bit in each of three elements
        }
        EXPECT_EQ(device_count(bad), hit.size()) << what;
        EXPECT_EQ(count_wrong(spec, n, rank, bad.data()), hit.size()) << what;
      }
    }
  }
}

TEST(GpuKernels, SmCopyCopiesAlignedAndUnalignedTails) {
  CCBENCH_REQUIRE_GPU();
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4097}, std::size_t{1} << 20}) {
    for (const std::size_t shift : {std::size_t{0}, std::size_t{3}}) {
      std::vector<unsigned char> host(bytes);
      for (std::size_t i = 0; i < bytes; ++i) {
        host[i] = static_cast<unsigned char>(i * 7 + 1);
      }
      DeviceBytes src(bytes + 16);
      DeviceBytes dst(bytes + 16);
      auto* s = static_cast<unsigned char*>(src.get()) + shift;
      ok(cudaMemcpy(s, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
      ok(kernels::sm_copy(dst.get(), s, bytes, 0, nullptr), "sm_copy");
      std::vector<unsigned char> back(bytes);
      ok(cudaMemcpy(back.data(), dst.get(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
      EXPECT_EQ(back, host) << bytes << " bytes, source offset " << shift;
    }
  }
}

}  // namespace
}  // namespace ccbench
