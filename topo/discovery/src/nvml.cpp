// GPUs from NVML, loaded at run time (dlopen), so the library builds and runs without a driver.
// The few NVML types used are declared here from NVIDIA's nvml.h (an ABI that NVML keeps stable).
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>

#include "ccbench/topo/discover.hpp"

namespace ccbench::topo {
namespace {

// --- the NVML ABI we use (nvml.h, CUDA 12.x) ---
using NvmlReturn = int;  // nvmlReturn_t; NVML_SUCCESS == 0
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlDeviceSt;
using NvmlDevice = NvmlDeviceSt*;  // nvmlDevice_t

struct NvmlPciInfo {                   // nvmlPciInfo_t (v3; also filled by the _v2 NVLink remote query)
  std::array<char, 16> bus_id_legacy;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  std::array<char, 32> bus_id;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:1B:00.0"
};

struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr unsigned int kMaxNvLinks = 18;           // NVML_NVLINK_MAX_LINKS
constexpr unsigned int kNameBuffer = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned int kDriverVersionBuffer = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned int kFeatureEnabled = 1;        // NVML_FEATURE_ENABLED
constexpr unsigned int kNvLinkDeviceGpu = 0x00;    // nvmlIntNvLinkDeviceType_t
constexpr unsigned int kNvLinkDeviceIbmNpu = 0x01;
constexpr unsigned int kNvLinkDeviceSwitch = 0x02;

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using CountFn = NvmlReturn (*)(unsigned int*);
using HandleFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using NameFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using PciInfoFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);
using MemoryFn = NvmlReturn (*)(NvmlDevice, NvmlMemory*);
using UintFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using LinkUintFn = NvmlReturn (*)(NvmlDevice, unsigned int, unsigned int*);
using LinkPciFn = NvmlReturn (*)(NvmlDevice, unsigned int, NvmlPciInfo*);
using DriverVersionFn = NvmlReturn (*)(char*, unsigned int);
using LinkCounterFn = NvmlReturn (*)(NvmlDevice, unsigned int, unsigned int, unsigned long long*);

struct DlClose {
  void operator()(void* handle) const { ::dlclose(handle); }
};

/// The entry points we use; optional ones stay null on drivers that lack them.
struct NvmlApi {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  CountFn count = nullptr;
  HandleFn handle_by_index = nullptr;
  NameFn name = nullptr;
  PciInfoFn pci_info = nullptr;
  MemoryFn memory = nullptr;
  UintFn curr_gen = nullptr;
  UintFn curr_width = nullptr;
  UintFn max_gen = nullptr;
  UintFn max_width = nullptr;
  UintFn architecture = nullptr;
  LinkUintFn nvlink_state = nullptr;
  LinkUintFn nvlink_version = nullptr;
  LinkPciFn nvlink_remote_pci = nullptr;
  LinkUintFn nvlink_remote_type = nullptr;
  DriverVersionFn driver_version = nullptr;
  LinkCounterFn nvlink_error_counter = nullptr;

  /// The entry points without which there is nothing to report.
  [[nodiscard]] bool usable() const {
    return init != nullptr && shutdown != nullptr && count != nullptr && handle_by_index != nullptr;
  }
  [[nodiscard]] std::string error(NvmlReturn code) const {
    return error_string != nullptr ? error_string(code) : fmt::format("NVML error {}", code);
  }
};

/// The dlopen'ed library (closed on destruction) and its entry points.
class NvmlLibrary {
 public:
  explicit NvmlLibrary(void* handle) : m_handle(handle) {
    load(m_api.init, "nvmlInit_v2");
    load(m_api.shutdown, "nvmlShutdown");
    load(m_api.error_string, "nvmlErrorString");
    load(m_api.count, "nvmlDeviceGetCount_v2");
    load(m_api.handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
    load(m_api.name, "nvmlDeviceGetName");
    load(m_api.pci_info, "nvmlDeviceGetPciInfo_v3");
    load(m_api.memory, "nvmlDeviceGetMemoryInfo");
    load(m_api.curr_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    load(m_api.curr_width, "nvmlDeviceGetCurrPcieLinkWidth");
    load(m_api.max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    load(m_api.max_width, "nvmlDeviceGetMaxPcieLinkWidth");
    load(m_api.architecture, "nvmlDeviceGetArchitecture");
    load(m_api.nvlink_state, "nvmlDeviceGetNvLinkState");
    load(m_api.nvlink_version, "nvmlDeviceGetNvLinkVersion");
    load(m_api.nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    load(m_api.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    load(m_api.driver_version, "nvmlSystemGetDriverVersion");
    load(m_api.nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter");
  }
  [[nodiscard]] const NvmlApi& api() const { return m_api; }

 private:
  template <typename Fn>
  void load(Fn& fn, const char* symbol) {
    fn = reinterpret_cast<Fn>(::dlsym(m_handle.get(), symbol));
  }
  std::unique_ptr<void, DlClose> m_handle;
  NvmlApi m_api;
};

/// nvmlInit_v2 ... nvmlShutdown.
class NvmlSession {
 public:
  explicit NvmlSession(const NvmlApi& nvml) : m_nvml(nvml), m_status(nvml.init()) {}
  ~NvmlSession() {
    if (m_status == kNvmlSuccess) {
      m_nvml.shutdown();
    }
  }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;
  NvmlSession(NvmlSession&&) = delete;
  NvmlSession& operator=(NvmlSession&&) = delete;
  [[nodiscard]] NvmlReturn status() const { return m_status; }

 private:
  const NvmlApi& m_nvml;
  NvmlReturn m_status;
};

int query_uint(UintFn fn, NvmlDevice device) {
  unsigned int value = 0;
  return fn != nullptr && fn(device, &value) == kNvmlSuccess ? static_cast<int>(value) : 0;
}

/// NVLink generation. nvmlDeviceGetNvLinkVersion has reported both raw generations (1..4, hwloc's
/// reading: P100 1 ... H100 4) and nvmlNvlinkVersion_t values (6 = 4.0, 7 = 5.0), and some drivers
/// report 7 on Hopper; the architecture decides where NVML knows it.
int nvlink_generation(unsigned int architecture, unsigned int raw) {
  constexpr unsigned int kVolta = 5;
  constexpr unsigned int kAmpere = 7;
  constexpr unsigned int kHopper = 9;
  constexpr unsigned int kBlackwell = 10;
  switch (architecture) {
    case kVolta:
      return 2;
    case kAmpere:
      return 3;
    case kHopper:
      return 4;
    case kBlackwell:
      return 5;
    default:
      break;
  }
  constexpr std::array<int, 8> kFromEnum{0, 1, 2, 2, 3, 3, 4, 5};
  return raw < kFromEnum.size() ? kFromEnum.at(raw) : 0;
}

NvLinkPeer peer_kind(unsigned int type) {
  switch (type) {
    case kNvLinkDeviceGpu:
      return NvLinkPeer::Gpu;
    case kNvLinkDeviceSwitch:
      return NvLinkPeer::NvSwitch;
    case kNvLinkDeviceIbmNpu:
      return NvLinkPeer::Cpu;
    default:
      return NvLinkPeer::Unknown;
  }
}

std::vector<NvLink> query_nvlinks(const NvmlApi& nvml, NvmlDevice device) {
  std::vector<NvLink> links;
  if (nvml.nvlink_state == nullptr) {
    return links;
  }
  const auto arch = static_cast<unsigned int>(query_uint(nvml.architecture, device));
  for (unsigned int i = 0; i < kMaxNvLinks; ++i) {
    unsigned int state = 0;
    if (nvml.nvlink_state(device, i, &state) != kNvmlSuccess) {
      continue;  // not a link of this GPU (PCIe boards, fused-off links)
    }
    NvLink link;
    link.index = static_cast<int>(i);
    link.active = state == kFeatureEnabled;
    unsigned int value = 0;
    if (link.active && nvml.nvlink_version != nullptr && nvml.nvlink_version(device, i, &value) == kNvmlSuccess) {
      link.version = nvlink_generation(arch, value);
    }
    if (link.active && nvml.nvlink_remote_type != nullptr &&
        nvml.nvlink_remote_type(device, i, &value) == kNvmlSuccess) {
      link.peer = peer_kind(value);
    }
    NvmlPciInfo remote{};
    if (link.active && nvml.nvlink_remote_pci != nullptr &&
        nvml.nvlink_remote_pci(device, i, &remote) == kNvmlSuccess) {
      link.peer_bus_id = normalize_bus_id(remote.bus_id.data());
    }
    links.push_back(std::move(link));
  }
  return links;
}

Gpu query_gpu(const NvmlApi& nvml, unsigned int index, NvmlDevice device) {
  Gpu gpu;
  gpu.index = static_cast<int>(index);
  std::array<char, kNameBuffer> name{};
  if (nvml.name != nullptr && nvml.name(device, name.data(), kNameBuffer) == kNvmlSuccess) {
    gpu.name = name.data();
  }
  NvmlPciInfo pci{};
  if (nvml.pci_info != nullptr && nvml.pci_info(device, &pci) == kNvmlSuccess) {
    gpu.bus_id = normalize_bus_id(pci.bus_id.data());
  }
  NvmlMemory memory{};
  if (nvml.memory != nullptr && nvml.memory(device, &memory) == kNvmlSuccess) {
    gpu.memory_bytes = memory.total;
  }
  gpu.pcie.gen_current = query_uint(nvml.curr_gen, device);
  gpu.pcie.gen_max = query_uint(nvml.max_gen, device);
  gpu.pcie.width_current = query_uint(nvml.curr_width, device);
  gpu.pcie.width_max = query_uint(nvml.max_width, device);
  gpu.nvlinks = query_nvlinks(nvml, device);
  return gpu;
}

/// A link whose type NVML did not say but whose far end is one of our GPUs is a GPU link.
void resolve_gpu_peers(std::vector<Gpu>& gpus) {
  for (auto& gpu : gpus) {
    for (auto& link : gpu.nvlinks) {
      const bool to_gpu = std::ranges::any_of(gpus, [&](const Gpu& g) { return g.bus_id == link.peer_bus_id; });
      if (link.peer == NvLinkPeer::Unknown && !link.peer_bus_id.empty() && to_gpu) {
        link.peer = NvLinkPeer::Gpu;
      }
    }
  }
}

GpuInventory query_devices(const NvmlApi& nvml) {
  const NvmlSession session{nvml};
  if (session.status() != kNvmlSuccess) {
    return {{}, fmt::format("no GPU found: nvmlInit failed: {}", nvml.error(session.status()))};
  }
  std::array<char, kDriverVersionBuffer> driver{};
  std::string driver_text = "unknown";
  if (nvml.driver_version != nullptr && nvml.driver_version(driver.data(), kDriverVersionBuffer) == kNvmlSuccess) {
    driver_text = driver.data();
  }
  unsigned int count = 0;
  if (const auto rc = nvml.count(&count); rc != kNvmlSuccess) {
    return {{}, fmt::format("no GPU found: nvmlDeviceGetCount failed: {} (driver {})", nvml.error(rc), driver_text)};
  }
  GpuInventory inventory;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (nvml.handle_by_index(i, &device) == kNvmlSuccess) {
      inventory.gpus.push_back(query_gpu(nvml, i, device));
    }
  }
  resolve_gpu_peers(inventory.gpus);
  inventory.discovery = inventory.gpus.empty()
                            ? fmt::format("no GPU found: NVML (driver {}) reports no GPU", driver_text)
                            : fmt::format("NVML, driver {}, {} GPU{}", driver_text, inventory.gpus.size(),
                                          inventory.gpus.size() == 1 ? "" : "s");
  return inventory;
}

// nvmlNvLinkErrorCounter_t: NVML_NVLINK_ERROR_DL_REPLAY (0), _RECOVERY (1), _CRC_FLIT (2), _CRC_DATA (3),
// _ECC_DATA (4): every one NVML has. Which a GPU answers for differs (Hopper's are those `nvidia-smi nvlink -e`
// shows: replay, recovery, crc_flit and ecc), so each is asked, and one NVML does not support is named.
constexpr std::array<const char*, 5> kNvLinkErrorCounters{"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
constexpr NvmlReturn kNvmlNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED

NvLinkErrors query_link_errors(const NvmlApi& nvml) {
  NvLinkErrors out;
  const NvmlSession session{nvml};
  unsigned int count = 0;
  if (nvml.nvlink_error_counter == nullptr || nvml.nvlink_state == nullptr || session.status() != kNvmlSuccess ||
      nvml.count(&count) != kNvmlSuccess) {
    return out;
  }
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (nvml.handle_by_index(i, &device) != kNvmlSuccess) {
      continue;
    }
    std::array<int, kNvLinkErrorCounters.size()> unsupported{};  // links of this GPU, per counter
    for (unsigned int link = 0; link < kMaxNvLinks; ++link) {
      unsigned int state = 0;
      if (nvml.nvlink_state(device, link, &state) != kNvmlSuccess || state != kFeatureEnabled) {
        continue;
      }
      for (unsigned int c = 0; c < kNvLinkErrorCounters.size(); ++c) {
        unsigned long long value = 0;
        const NvmlReturn rc = nvml.nvlink_error_counter(device, link, c, &value);
        if (rc == kNvmlSuccess) {
          out.readings.push_back(
              {"nvlink", fmt::format("GPU{} NVLink {}", i, link), 0, kNvLinkErrorCounters.at(c), value});
        } else if (rc == kNvmlNotSupported) {
          ++unsupported.at(c);
        }
      }
    }
    for (unsigned int c = 0; c < kNvLinkErrorCounters.size(); ++c) {
      if (unsupported.at(c) > 0) {
        out.unsupported.push_back(fmt::format("GPU{}: {} ({} link{})", i, kNvLinkErrorCounters.at(c), unsupported.at(c),
                                              unsupported.at(c) == 1 ? "" : "s"));
      }
    }
  }
  return out;
}

}  // namespace

GpuInventory query_nvml(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return {{}, fmt::format("no GPU found: {} not available (no NVIDIA driver)", library)};
  }
  const NvmlLibrary library_handle{handle};
  const auto& nvml = library_handle.api();
  if (!nvml.usable()) {
    return {{}, fmt::format("no GPU found: {} lacks nvmlInit_v2 or nvmlDeviceGetCount_v2 (driver too old)", library)};
  }
  return query_devices(nvml);
}

NvLinkErrors query_nvlink_errors(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return {};
  }
  const NvmlLibrary library_handle{handle};
  return library_handle.api().usable() ? query_link_errors(library_handle.api()) : NvLinkErrors{};
}

}  // namespace ccbench::topo
