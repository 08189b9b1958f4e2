#include "copy_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "ccbench/collective.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/topo/peak.hpp"

namespace ccbench::copy {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    out.push_back(item);
  }
  return out;
}

std::string_view engine_name(Engine e) { return e == Engine::Sm ? "sm" : "ce"; }

}  // namespace

std::string Path::id() const {
  switch (kind) {
    case Kind::H2D:
    case Kind::D2H:
      return fmt::format("{}:{}:gpu{}", kind == Kind::H2D ? "h2d" : "d2h",
                         host == HostMemory::Pinned ? "pinned" : "pageable", src);
    case Kind::D2D:
      return fmt::format("d2d:{}:gpu{}", engine_name(engine), src);
    case Kind::P2P:
      return fmt::format("p2p:{}:{}:gpu{}-gpu{}", engine_name(engine), bidirectional ? "bidir" : "uni", src, dst);
  }
  return "?";
}

Selection parse_selection(const std::string& kinds, const std::string& engines, const std::string& devices,
                          int visible_devices) {
  Selection s;
  if (kinds != "all") {
    s.h2d = s.d2h = s.d2d = s.p2p = false;
    for (const auto& k : split_list(kinds)) {
      if (k == "h2d") {
        s.h2d = true;
      } else if (k == "d2h") {
        s.d2h = true;
      } else if (k == "d2d") {
        s.d2d = true;
      } else if (k == "p2p") {
        s.p2p = true;
      } else {
        throw UsageError(fmt::format("--kinds '{}': '{}' is not one of h2d, d2h, d2d, p2p (or all)", kinds, k));
      }
    }
  }
  if (engines != "all") {
    s.ce = s.sm = false;
    for (const auto& e : split_list(engines)) {
      if (e == "ce") {
        s.ce = true;
      } else if (e == "sm") {
        s.sm = true;
      } else {
        throw UsageError(
            fmt::format("--engines '{}': '{}' is not ce (copy engine) or sm (copy kernel), or all", engines, e));
      }
    }
  }
  if (devices == "all") {
    for (int d = 0; d < visible_devices; ++d) {
      s.devices.push_back(d);
    }
  } else {
    for (const auto& d : split_list(devices)) {
      int index = -1;
      if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 4 ||
          (index = std::stoi(d)) >= visible_devices) {
        throw UsageError(
            fmt::format("--devices '{}': '{}' is not a CUDA device here (0..{})", devices, d, visible_devices - 1));
      }
      if (std::find(s.devices.begin(), s.devices.end(), index) != s.devices.end()) {
        throw UsageError(fmt::format("--devices '{}': device {} is listed twice", devices, index));
      }
      s.devices.push_back(index);
    }
  }
  return s;
}

std::vector<Path> plan_paths(const Selection& s, const std::vector<std::vector<bool>>& peer_access) {
  std::vector<Path> out;
  std::vector<Engine> engines;
  if (s.ce) {
    engines.push_back(Engine::CopyEngine);
  }
  if (s.sm) {
    engines.push_back(Engine::Sm);
  }
  const auto reaches = [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a);
    const auto ub = static_cast<std::size_t>(b);
    return ua < peer_access.size() && ub < peer_access[ua].size() && peer_access[ua][ub];
  };
  for (const int d : s.devices) {
    for (const HostMemory m : {HostMemory::Pinned, HostMemory::Pageable}) {
      if (s.h2d && s.ce) {
        out.push_back({Kind::H2D, Engine::CopyEngine, m, false, d, d});
      }
      if (s.d2h && s.ce) {
        out.push_back({Kind::D2H, Engine::CopyEngine, m, false, d, d});
      }
    }
    if (s.d2d) {
      for (const Engine e : engines) {
        out.push_back({Kind::D2D, e, HostMemory::Pinned, false, d, d});
      }
    }
  }
  if (!s.p2p) {
    return out;
  }
  for (const int a : s.devices) {
    for (const int b : s.devices) {
      if (a == b) {
        continue;
      }
      for (const Engine e : engines) {
        const bool direct = reaches(a, b) && reaches(b, a);
        if (e == Engine::Sm && !direct) {
          continue;  // a kernel cannot store into a GPU it has no peer access to
        }
        out.push_back({Kind::P2P, e, HostMemory::Pinned, false, a, b});
        if (a < b) {
          out.push_back({Kind::P2P, e, HostMemory::Pinned, true, a, b});
        }
      }
    }
  }
  return out;
}

CopyPeak copy_peak(const Path& path, const topo::SpecDatabase& specs, const topo::HostTopology& host,
                   const std::vector<int>& topo_gpu_of_device) {
  const auto gpu_of = [&](int device) -> const topo::Gpu* {
    const auto d = static_cast<std::size_t>(device);
    if (d >= topo_gpu_of_device.size() || topo_gpu_of_device[d] < 0) {
      return nullptr;
    }
    return &host.gpus.at(static_cast<std::size_t>(topo_gpu_of_device[d]));
  };
  const topo::Gpu* src = gpu_of(path.src);
  if (src == nullptr) {
    return {std::nullopt, fmt::format("GPU {} is not in the discovered topology", path.src)};
  }
  switch (path.kind) {
    case Kind::H2D:
    case Kind::D2H: {  // the link at its max, as the collectives' peak model has it (GPUs idle at Gen1)
      topo::Peak p = topo::gpu_pcie_peak(specs, *src, fmt::format("GPU {}", path.src));
      return {p.GBps, std::move(p.basis)};
    }
    case Kind::D2D: {
      const topo::GpuSpec* spec = specs.find_gpu(src->name);
      if (spec == nullptr || spec->hbm_GBps <= 0.0) {
        return {std::nullopt, fmt::format("no memory bandwidth spec for '{}'", src->name)};
      }
      return {spec->hbm_GBps, fmt::format("{} memory {:g} GB/s (read + write: busbw = 2 x bytes / time) ({})",
                                          spec->model, spec->hbm_GBps, spec->source)};
    }
    case Kind::P2P: {
      const topo::Gpu* dst = gpu_of(path.dst);
      if (dst == nullptr) {
        return {std::nullopt, fmt::format("GPU {} is not in the discovered topology", path.dst)};
      }
      const std::vector<topo::RankPlace> places{{0, topo_gpu_of_device[static_cast<std::size_t>(path.src)]},
                                                {0, topo_gpu_of_device[static_cast<std::size_t>(path.dst)]}};
      const topo::Peak p = topo::expected_peak(specs, {host}, places);
      if (!p.GBps) {
        return {std::nullopt, p.basis};
      }
      if (path.bidirectional) {
        return {2.0 * *p.GBps, fmt::format("2 x {} (both directions)", p.basis)};
      }
      return {p.GBps, p.basis};
    }
  }
  return {std::nullopt, "unknown path"};
}

}  // namespace ccbench::copy
