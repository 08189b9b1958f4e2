#include "debug_hooks.hpp"

#include <fmt/format.h>

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ccbench::debug {
namespace {

constexpr double kLaterTimeoutS = 5.0;  // longer than a roll call and a notice (2 s each)

std::string_view variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view{} : std::string_view(value);
}

bool asked(const char* name, std::string_view point, int rank) {
  return variable(name) == fmt::format("{}:{}", point, rank);
}

}  // namespace

void stop_if_asked(std::string_view point, int rank) {
  if (asked("CCBENCH_DEBUG_STOP", point, rank)) {
    std::raise(SIGSTOP);
  }
}

void fail_if_asked(std::string_view point, int rank) {
  if (asked("CCBENCH_DEBUG_FAIL", point, rank)) {
    throw std::runtime_error(fmt::format("CCBENCH_DEBUG_FAIL={}:{}: a fatal error on this rank alone", point, rank));
  }
}

double extra_timeout_s(int rank) {
  const std::string_view text = variable("CCBENCH_DEBUG_EXPIRE_FIRST");
  int first = -1;
  if (text.empty() || std::from_chars(text.data(), text.data() + text.size(), first).ec != std::errc{}) {
    return 0.0;
  }
  return first == rank ? 0.0 : kLaterTimeoutS;
}

int gpus_claimed() {
  const std::string_view text = variable("CCBENCH_DEBUG_GPUS");
  int count = -1;
  if (text.empty() || std::from_chars(text.data(), text.data() + text.size(), count).ec != std::errc{}) {
    return -1;
  }
  return count;
}

double record_delay_s() {
  const std::string value{variable("CCBENCH_DEBUG_SLOW_RECORD")};
  return value.empty() ? 0.0 : std::strtod(value.c_str(), nullptr);
}

double late_s(int rank) {
  const std::string_view text = variable("CCBENCH_DEBUG_LATE");
  const auto colon = text.find(':');
  int who = -1;
  if (colon == std::string_view::npos || std::from_chars(text.data(), text.data() + colon, who).ec != std::errc{} ||
      who != rank) {
    return 0.0;
  }
  return std::strtod(std::string(text.substr(colon + 1)).c_str(), nullptr) * 1e-6;
}

}  // namespace ccbench::debug
