// A CUDA driver library that says it supports CUDA 12.4 and nothing more: CUDA 13's runtime then refuses
// to start with cudaErrorInsufficientDriver, as it does on a node whose driver is older than R580.
// The tests put it first on LD_LIBRARY_PATH as libcuda.so.1.
extern "C" {
int cuDriverGetVersion(int* version) {
  *version = 12040;
  return 0;
}
int cuInit(unsigned int /*flags*/) { return 0; }
}
