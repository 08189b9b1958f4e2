// A stand-in libnvidia-ml for tests: two H100s on an NVSwitch, GPU1 with NVLink 3 down and its
// PCIe link at Gen4, GPU0's NVLink 2 logging replays. Declared as nvml.h declares these entry points (C ABI, the same
// layouts that src/nvml.cpp assumes). Loaded by path through DiscoveryInputs::nvml_library.
#include <cstdint>
#include <cstring>

// NVML spells its names its own way; this file must export exactly those.
// NOLINTBEGIN(readability-identifier-naming)
extern "C" {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

namespace {
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr unsigned int kGpus = 2;
constexpr unsigned int kLinks = 18;

unsigned int index_of(nvmlDevice_t device) {
  return static_cast<unsigned int>(reinterpret_cast<std::uintptr_t>(device) - 1);
}
void copy(char* out, unsigned int length, const char* text) {
  std::strncpy(out, text, length - 1);
  out[length - 1] = '\0';
}
}  // namespace

nvmlReturn_t nvmlInit_v2() { return kSuccess; }
nvmlReturn_t nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(nvmlReturn_t) { return "fake NVML error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = kGpus;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= kGpus) {
    return kInvalidArgument;
  }
  // An opaque handle, as in NVML: the index + 1, never dereferenced.
  *device =
      reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);  // NOLINT(performance-no-int-to-ptr)
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t, char* name, unsigned int length) {
  copy(name, length, "NVIDIA H100 80GB HBM3");
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof(*pci));
  copy(pci->busId, sizeof(pci->busId), index_of(device) == 0 ? "00000000:1B:00.0" : "00000000:43:00.0");
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t* memory) {
  *memory = {85520809984ULL, 0, 0};
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  *gen = index_of(device) == 0 ? 5 : 4;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t, unsigned int* gen) {
  *gen = 5;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t, unsigned int* width) {
  *width = 16;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t, unsigned int* width) {
  *width = 16;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t, unsigned int* arch) {
  *arch = 9;  // NVML_DEVICE_ARCH_HOPPER
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int* active) {
  if (link >= kLinks) {
    return kNotSupported;
  }
  *active = index_of(device) == 1 && link == 3 ? 0 : 1;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t, unsigned int, unsigned int* version) {
  *version = 7;  // what some drivers report on Hopper; the architecture says NVLink4
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t, unsigned int, unsigned int* type) {
  *type = 2;  // NVML_NVLINK_DEVICE_TYPE_SWITCH
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned int, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof(*pci));
  copy(pci->busId, sizeof(pci->busId), "00000000:05:00.0");
  return kSuccess;
}
// NVLink error counters as Hopper's NVML answers: replay (0), recovery (1), crc_flit (2) and ecc_data (4), not
// crc_data (3). GPU0's link 2 counts 3 more replays at each query and its link 1 2 more ECC data errors (links
// logging errors); every other counter of an active link stays at 0.
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, unsigned int counter,
                                             unsigned long long* value) {
  static unsigned long long replays = 40;
  static unsigned long long ecc = 7;
  if (link >= kLinks || counter > 4) {
    return kInvalidArgument;
  }
  if ((index_of(device) == 1 && link == 3) || counter == 3) {
    return kNotSupported;  // the link is down; Hopper counts no CRC data errors
  }
  const bool gpu0 = index_of(device) == 0;
  *value = gpu0 && link == 2 && counter == 0 ? (replays += 3) : gpu0 && link == 1 && counter == 4 ? (ecc += 2) : 0;
  return kSuccess;
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  copy(version, length, "550.54.15");
  return kSuccess;
}

}  // extern "C"
// NOLINTEND(readability-identifier-naming)
