#pragma once
// The tests' side of the stand-in libnccl (fake_nccl.hpp): points the backend's loader at it
// (CCBENCH_NCCL_LIBRARY, before NCCL is first loaded) and reads its log through the same handle.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fake_nccl.hpp"
#include "nccl_api.hpp"

namespace ccbench::nccl_detail::testing {

class FakeNccl {
 public:
  /// Loads the stand-in (the backend's loader gets the same one) and starts a new log under `script`.
  explicit FakeNccl(const FakeNcclScript& script = {}) {
    ::setenv("CCBENCH_NCCL_LIBRARY", CCBENCH_FAKE_NCCL, 1);
    if (nccl_api() == nullptr) {
      throw std::runtime_error("the stand-in NCCL did not load: " + nccl_load_error());
    }
    m_handle = dlopen(CCBENCH_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
    m_reset = reinterpret_cast<FakeNcclResetFn>(dlsym(m_handle, "fake_nccl_reset"));
    m_name = reinterpret_cast<FakeNcclNameThreadFn>(dlsym(m_handle, "fake_nccl_name_thread"));
    m_size = reinterpret_cast<FakeNcclLogSizeFn>(dlsym(m_handle, "fake_nccl_log_size"));
    m_line = reinterpret_cast<FakeNcclLogLineFn>(dlsym(m_handle, "fake_nccl_log_line"));
    m_reset(&script);
    name_thread("rank");
  }
  FakeNccl(const FakeNccl&) = delete;
  FakeNccl& operator=(const FakeNccl&) = delete;
  FakeNccl(FakeNccl&&) = delete;
  FakeNccl& operator=(FakeNccl&&) = delete;
  ~FakeNccl() { dlclose(m_handle); }

  /// Log lines from this thread carry `name`.
  void name_thread(const char* name) const { m_name(name); }

  [[nodiscard]] std::vector<std::string> log() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m_size(); ++i) {
      out.emplace_back(m_line(i));
    }
    return out;
  }
  /// The log's lines that contain `text`.
  [[nodiscard]] std::vector<std::string> lines_with(std::string_view text) const {
    std::vector<std::string> out;
    for (auto& line : log()) {
      if (line.find(text) != std::string::npos) {
        out.push_back(std::move(line));
      }
    }
    return out;
  }
  /// The whole log, one call a line (for failure messages).
  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& line : log()) {
      out += line + "\n";
    }
    return out;
  }

 private:
  void* m_handle = nullptr;
  FakeNcclResetFn m_reset = nullptr;
  FakeNcclNameThreadFn m_name = nullptr;
  FakeNcclLogSizeFn m_size = nullptr;
  FakeNcclLogLineFn m_line = nullptr;
};

}  // namespace ccbench::nccl_detail::testing
