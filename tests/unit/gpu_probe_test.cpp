// What CUDA's answer means for a run: no GPU (host memory is fine) or a GPU machine whose CUDA cannot start
// (never to pass as "no GPU"). The answers are the ones a static CUDA 13 runtime gives on this machine (no
// driver: cudaErrorInsufficientDriver with driver version 0) and with a driver library that reports CUDA 12.4.
#include "ccbench/gpu_probe.hpp"

#include <gtest/gtest.h>

namespace ccbench {
namespace {

CudaAnswer failed(const char* name, int driver, bool nodes) {
  CudaAnswer a;
  a.ok = false;
  a.error_name = name;
  a.error_text = "CUDA driver version is insufficient for CUDA runtime version";
  a.driver_version = driver;
  a.runtime_version = 13000;
  a.nvidia_device_nodes = nodes;
  return a;
}

TEST(GpuProbe, DevicesCountedWhenCudaStarts) {
  CudaAnswer a;
  a.count = 8;
  const GpuProbe p = read_cuda_answer(a);
  EXPECT_EQ(p.count, 8);
  EXPECT_EQ(p.problem, "");
}

TEST(GpuProbe, NoDeviceAndNoDriverAreNoGpu) {
  CudaAnswer none = failed("cudaErrorNoDevice", 13000, true);
  none.no_device = true;
  EXPECT_EQ(read_cuda_answer(none).problem, "");
  const GpuProbe bare = read_cuda_answer(failed("cudaErrorInsufficientDriver", 0, false));  // this machine
  EXPECT_EQ(bare.count, 0);
  EXPECT_EQ(bare.problem, "");
}

TEST(GpuProbe, AnOldDriverIsAProblemNamedByCudasErrorAndWhatItNeeds) {
  const GpuProbe p = read_cuda_answer(failed("cudaErrorInsufficientDriver", 12040, true));
  EXPECT_EQ(p.count, 0);
  EXPECT_NE(p.problem.find("cudaErrorInsufficientDriver"), std::string::npos) << p.problem;
  EXPECT_NE(p.problem.find("CUDA 13.0 runtime needs an R580 or newer driver"), std::string::npos) << p.problem;
  EXPECT_NE(p.problem.find("supports CUDA 12.4 only"), std::string::npos) << p.problem;
}

TEST(GpuProbe, DeviceNodesWithoutTheDriverLibraryIsAProblem) {
  const GpuProbe p = read_cuda_answer(failed("cudaErrorInsufficientDriver", 0, true));
  EXPECT_NE(p.problem.find("libcuda.so.1"), std::string::npos) << p.problem;
}

TEST(GpuProbe, AnyOtherErrorIsAProblem) {
  const GpuProbe p = read_cuda_answer(failed("cudaErrorDevicesUnavailable", 13000, true));
  EXPECT_NE(p.problem.find("cudaErrorDevicesUnavailable"), std::string::npos) << p.problem;
}

TEST(GpuProbe, DriverBranches) {
  EXPECT_EQ(driver_branch_for(13000), "580");
  EXPECT_EQ(driver_branch_for(12080), "525");
  EXPECT_EQ(driver_branch_for(10020), "");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
}

}  // namespace
}  // namespace ccbench
