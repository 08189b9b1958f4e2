#include "nccl_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include "ccbench/version.hpp"

namespace ccbench::nccl_detail {
namespace {

struct Loaded {
  NcclApi api;
  bool ok = false;
  std::string error;
};

/// site-packages/nvidia/nccl/lib/libnccl.so.2 under PREFIX/lib/python3.*/{site,dist}-packages.
std::vector<std::filesystem::path> wheel_candidates(const std::filesystem::path& prefix) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& lib : {prefix / "lib", prefix / "lib64"}) {
    for (const auto& entry : std::filesystem::directory_iterator(lib, ec)) {
      if (!entry.path().filename().string().starts_with("python3")) {
        continue;
      }
      for (const char* packages : {"site-packages", "dist-packages"}) {
        auto file = entry.path() / packages / "nvidia" / "nccl" / "lib" / "libnccl.so.2";
        if (std::filesystem::exists(file, ec)) {
          out.push_back(std::move(file));
        }
      }
    }
  }
  return out;
}

std::vector<std::string> fallbacks() {
  std::vector<std::string> out{"/usr/local/cuda/lib64/libnccl.so.2"};
  std::vector<std::filesystem::path> prefixes;
  for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      prefixes.emplace_back(value);
    }
  }
  prefixes.emplace_back("/usr/local");
  prefixes.emplace_back("/usr");
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    prefixes.emplace_back(std::filesystem::path{home} / ".local");
  }
  for (const auto& prefix : prefixes) {
    for (const auto& file : wheel_candidates(prefix)) {
      out.push_back(file.string());
    }
  }
  return out;
}

template <typename Fn>
bool bind(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  if (fn == nullptr) {
    missing += missing.empty() ? name : fmt::format(", {}", name);
  }
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  void* handle = nullptr;
  std::string tried;
  if (const char* file = std::getenv("CCBENCH_NCCL_LIBRARY"); file != nullptr && *file != '\0') {
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      l.error = fmt::format("CCBENCH_NCCL_LIBRARY={}: {}", file, dlerror());
      return l;
    }
  } else {
    handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    tried = "libnccl.so.2 (LD_LIBRARY_PATH and the system's folders)";
    for (const auto& candidate : fallbacks()) {
      if (handle != nullptr) {
        break;
      }
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      tried += ", " + candidate;
    }
    if (handle == nullptr) {
      l.error = fmt::format(
          "no NCCL library found (looked for {}, and a pip wheel's under $VIRTUAL_ENV, $CONDA_PREFIX, /usr/local, "
          "/usr, ~/.local); install NCCL (libnccl2, or pip install nvidia-nccl-cu12/-cu13), or set "
          "CCBENCH_NCCL_LIBRARY to its libnccl.so.2",
          tried);
      return l;
    }
  }
  auto& a = l.api;
  std::string missing;
  bind(handle, "ncclGetVersion", a.GetVersion, missing);
  bind(handle, "ncclGetUniqueId", a.GetUniqueId, missing);
  bind(handle, "ncclGetErrorString", a.GetErrorString, missing);
  bind(handle, "ncclGetLastError", a.GetLastError, missing);
  bind(handle, "ncclCommInitRankConfig", a.CommInitRankConfig, missing);
  bind(handle, "ncclCommFinalize", a.CommFinalize, missing);
  bind(handle, "ncclCommDestroy", a.CommDestroy, missing);
  bind(handle, "ncclCommAbort", a.CommAbort, missing);
  bind(handle, "ncclCommGetAsyncError", a.CommGetAsyncError, missing);
  bind(handle, "ncclGroupStart", a.GroupStart, missing);
  bind(handle, "ncclGroupEnd", a.GroupEnd, missing);
  bind(handle, "ncclSend", a.Send, missing);
  bind(handle, "ncclRecv", a.Recv, missing);
  bind(handle, "ncclAllReduce", a.AllReduce, missing);
  bind(handle, "ncclAllGather", a.AllGather, missing);
  bind(handle, "ncclReduceScatter", a.ReduceScatter, missing);
  bind(handle, "ncclBroadcast", a.Broadcast, missing);
  bind(handle, "ncclReduce", a.Reduce, missing);
  std::string optional;
  bind(handle, "ncclAlltoAll", a.AlltoAll, optional);  // 2.28 and later
  bind(handle, "ncclGather", a.Gather, optional);      // 2.28 and later
  bind(handle, "ncclScatter", a.Scatter, optional);    // 2.28 and later
  bind(handle, "ncclMemAlloc", a.MemAlloc, optional);  // 2.19 and later (-R)
  bind(handle, "ncclMemFree", a.MemFree, optional);
  bind(handle, "ncclCommRegister", a.CommRegister, optional);
  bind(handle, "ncclCommDeregister", a.CommDeregister, optional);
  bind(handle, "ncclCommWindowRegister", a.CommWindowRegister, optional);  // 2.27 and later (-R 2)
  bind(handle, "ncclCommWindowDeregister", a.CommWindowDeregister, optional);
  a.file = library_file_of(reinterpret_cast<const void*>(a.GetVersion));  // NOLINT
  if (!missing.empty()) {
    l.error = fmt::format("the NCCL library {} has no {} (NCCL 2.14 or later is needed)", a.file, missing);
    return l;
  }
  l.ok = true;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const NcclApi* nccl_api() noexcept {
  try {
    return loaded().ok ? &loaded().api : nullptr;
  } catch (...) {
    return nullptr;
  }
}

int loaded_version() noexcept {
  const NcclApi* api = nccl_api();
  int version = 0;
  return api != nullptr && api->GetVersion(&version) == ncclSuccess ? version : 0;
}

std::string nccl_load_error() { return loaded().ok ? std::string{} : loaded().error; }

const NcclApi& nccl() {
  if (const NcclApi* api = nccl_api()) {
    return *api;
  }
  throw std::logic_error("NCCL was called before it was loaded: " + nccl_load_error());
}

}  // namespace ccbench::nccl_detail
