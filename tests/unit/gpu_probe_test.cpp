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

TEST(GpuProbe, ADeviceIsChosenFromWhatIsVisible) {
  const DeviceChoice per_gpu = choose_device(3, 8, 8, "node7");
  EXPECT_EQ(per_gpu.device, 3);
  EXPECT_EQ(per_gpu.how, "device 3 of 8 visible (local rank 3 of 8 on node7)");
  const DeviceChoice per_task = choose_device(5, 8, 1, "node7");  // srun --gpus-per-task=1
  EXPECT_EQ(per_task.device, 0);
  EXPECT_NE(per_task.how.find("one GPU per task"), std::string::npos) << per_task.how;
  EXPECT_EQ(choose_device(1, 2, 4, "node7").device, 1);  // more GPUs than ranks
  const DeviceChoice over = choose_device(3, 4, 2, "node7");
  EXPECT_EQ(over.device, -1);
  EXPECT_NE(over.how.find("4 ranks on node7 but 2 GPU(s) visible"), std::string::npos) << over.how;
  EXPECT_EQ(choose_device(0, 1, 0, "node7").device, -1);
  EXPECT_NE(choose_device(0, 1, 0, "node7").how.find("no CUDA GPU is visible on node7"), std::string::npos);
}

}  // namespace
}  // namespace ccbench
