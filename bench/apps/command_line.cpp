#include "command_line.hpp"

#include <algorithm>
#include <string_view>

namespace ccbench {

CommandLine::CommandLine(Collective collective, std::span<const char* const> args) {
  try {
    m_parsed = parse_command_line(collective, args);
  } catch (const std::exception&) {
    m_error = std::current_exception();
  }
}

const Parsed& CommandLine::parsed() const {
  if (m_error) {
    std::rethrow_exception(m_error);
  }
  return *m_parsed;
}

Mode mode_of(Collective collective, std::span<const char* const> args) {
  const auto given = [&](auto&& is) { return std::any_of(args.begin(), args.end(), is); };
  if (given([](std::string_view a) { return a == "--check-args"; })) {
    return Mode::CheckArgs;
  }
  if (is_rdma(collective) &&
      given([](std::string_view a) { return a == "--server" || a == "--connect" || a.starts_with("--connect="); })) {
    return Mode::StandalonePair;
  }
  return Mode::MpiJob;
}

}  // namespace ccbench
