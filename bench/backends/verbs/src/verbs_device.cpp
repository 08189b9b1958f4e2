#include "verbs_device.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "ccbench/errors.hpp"

namespace ccbench::verbs_detail {
namespace {

std::string gid_type_name(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V1:
      return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2:
      return "RoCE v2";
    default:
      return "IB";
  }
}

}  // namespace

[[noreturn]] void fail(std::string_view call, int err) {
  throw BackendError(fmt::format("{} failed: {}", call, std::strerror(err)));
}

std::string gid_text(const ibv_gid& gid) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  ::inet_ntop(AF_INET6, static_cast<const void*>(gid.raw), text.data(), text.size());
  return text.data();
}

PortFacts query_port(ibv_context* ctx, int port) {
  PortFacts f;
  if (const int err = ::ibv_query_port(ctx, static_cast<std::uint8_t>(port), &f.attr); err != 0) {
    fail("ibv_query_port", err);
  }
  f.link_layer = f.attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  return f;
}

verbs::DeviceView view_of(ibv_device* dev, int port) {
  verbs::DeviceView v;
  v.name = ::ibv_get_device_name(dev);
  Context ctx(::ibv_open_device(dev));
  if (ctx.get() == nullptr) {
    v.port_state = fmt::format("not openable ({})", std::strerror(errno));
    return v;
  }
  ibv_device_attr attr{};
  if (::ibv_query_device(ctx.get(), &attr) != 0) {
    v.port_state = "not queryable";
    return v;
  }
  v.port_count = attr.phys_port_cnt;
  if (port <= v.port_count) {
    ibv_port_attr p{};
    if (::ibv_query_port(ctx.get(), static_cast<std::uint8_t>(port), &p) == 0) {
      v.port_active = p.state == IBV_PORT_ACTIVE;
      v.port_state = ::ibv_port_state_str(p.state);
    }
  }
  return v;
}

std::vector<verbs::GidView> gid_table(ibv_context* ctx, int port, int table_size) {
  std::vector<ibv_gid_entry> entries(static_cast<std::size_t>(std::max(table_size, 1)) * 4);  // every port's
  const ssize_t n = ::ibv_query_gid_table(ctx, entries.data(), entries.size(), 0);
  std::vector<verbs::GidView> out;
  if (n < 0) {
    // The table query fails on some kernels and providers (rxe in Debian 12's 6.1 here): read the port's
    // entries one by one, types included. Tables are filled from index 0, so 8 empty entries in a row end
    // the scan (reading all of a 1024-entry table costs seconds under emulation).
    int empty_run = 0;
    for (int i = 0; i < table_size && empty_run < 8; ++i) {
      ibv_gid_entry e{};
      if (::ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i), &e, 0) == 0 &&
          std::any_of(std::begin(e.gid.raw), std::end(e.gid.raw), [](std::uint8_t b) { return b != 0; })) {
        out.push_back({i, gid_type_name(e.gid_type), gid_text(e.gid)});
        empty_run = 0;
      } else {
        ++empty_run;
      }
    }
    return out;
  }
  for (ssize_t i = 0; i < n; ++i) {
    const auto& e = entries[static_cast<std::size_t>(i)];
    if (static_cast<int>(e.port_num) == port) {
      out.push_back({static_cast<int>(e.gid_index), gid_type_name(e.gid_type), gid_text(e.gid)});
    }
  }
  std::ranges::sort(out, {}, &verbs::GidView::index);
  return out;
}

}  // namespace ccbench::verbs_detail
