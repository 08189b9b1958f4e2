// How long an acceptance verdict is trusted: a profile's validity and accept --max-age, on the runs' own end times.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/report/accept.hpp"
#include "ccbench/report/evidence.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

/// A number of `digits` digits at `at` of `text`, or unset.
std::optional<int> digits_at(std::string_view text, std::size_t at, std::size_t digits) {
  if (text.size() < at + digits) {
    return std::nullopt;
  }
  int value = 0;
  const auto* first = text.data() + at;
  const auto [end, ec] = std::from_chars(first, first + digits, value);
  return ec == std::errc{} && end == first + digits ? std::optional(value) : std::nullopt;
}

std::string utc_text(std::int64_t epoch) {
  using namespace std::chrono;
  const auto day_count = epoch >= 0 ? epoch / 86400 : (epoch - 86399) / 86400;
  const year_month_day date{sys_days{days{day_count}}};
  const auto in_day = epoch - day_count * 86400;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), in_day / 3600,
                     in_day % 3600 / 60, in_day % 60);
}

/// When a run's evidence was taken: its end, else its start; unset when it holds neither (imported logs).
std::optional<std::int64_t> time_of(const LoadedRun& run) {
  const auto ended = epoch_of(run.doc.run.ended_utc);
  return ended ? ended : epoch_of(run.doc.run.started_utc);
}

/// The run with the oldest time, or the first with none.
std::pair<const LoadedRun*, std::optional<std::int64_t>> oldest(const std::vector<LoadedRun>& runs) {
  std::pair<const LoadedRun*, std::optional<std::int64_t>> out{nullptr, std::nullopt};
  for (const auto& run : runs) {
    const auto t = time_of(run);
    if (!t) {
      return {&run, std::nullopt};
    }
    if (out.first == nullptr || *t < *out.second) {
      out = {&run, t};
    }
  }
  return out;
}

}  // namespace

std::optional<std::int64_t> epoch_of(std::string_view utc) {
  using namespace std::chrono;
  const auto y = digits_at(utc, 0, 4);
  const auto mo = digits_at(utc, 5, 2);
  const auto d = digits_at(utc, 8, 2);
  const auto h = digits_at(utc, 11, 2);
  const auto mi = digits_at(utc, 14, 2);
  const auto s = digits_at(utc, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s || utc.size() < 20 || utc[4] != '-' || utc[7] != '-' || utc[10] != 'T' ||
      utc[13] != ':' || utc[16] != ':' || utc.back() != 'Z' || *h > 23 || *mi > 59 || *s > 60) {
    return std::nullopt;
  }
  const year_month_day date{year{*y}, month{static_cast<unsigned>(*mo)}, day{static_cast<unsigned>(*d)}};
  if (!date.ok()) {
    return std::nullopt;
  }
  return sys_days{date}.time_since_epoch().count() * std::int64_t{86400} + std::int64_t{*h} * 3600 +
         std::int64_t{*mi} * 60 + *s;
}

std::optional<std::int64_t> parse_age(std::string_view text) {
  if (text.size() < 2 || text.size() > 7) {
    return std::nullopt;
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
  if (ec != std::errc{} || end != text.data() + text.size() - 1 || n <= 0) {
    return std::nullopt;
  }
  switch (text.back()) {
    case 's':
      return n;
    case 'm':
      return n * 60;
    case 'h':
      return n * 3600;
    case 'd':
      return n * 86400;
    default:
      return std::nullopt;
  }
}

void refuse_stale(const std::vector<LoadedRun>& runs, std::int64_t max_age_s, std::int64_t now_s) {
  const auto [run, t] = oldest(runs);
  if (run == nullptr) {
    return;
  }
  if (!t) {
    stop_at_no_verdict(
        rule_on(Stakes::Acceptance, {{Lack::Stale, fmt::format("--max-age: {} holds no time (run.ended_utc): its age "
                                                               "cannot be told, so it is not judged",
                                                               printable(run->path))}}));
  }
  if (now_s - *t > max_age_s) {
    stop_at_no_verdict(rule_on(
        Stakes::Acceptance,
        {{Lack::Stale,
          fmt::format("--max-age {}s: {} ended {} ({:.1f} h ago): too old to judge; run the checks again", max_age_s,
                      printable(run->path), utc_text(*t), static_cast<double>(now_s - *t) / 3600.0)}}));
  }
}

std::optional<std::string> valid_until(const Profile& profile, const std::vector<LoadedRun>& runs) {
  if (!profile.validity_s) {
    return std::nullopt;
  }
  const auto [run, t] = oldest(runs);
  if (run == nullptr) {
    return std::nullopt;
  }
  if (!t) {
    stop_at_no_verdict(
        rule_on(Stakes::Acceptance, {{Lack::Stale, fmt::format("profile {} sets a validity ({}), and {} holds no time "
                                                               "(run.ended_utc): its verdict could not say until when",
                                                               profile.id, profile.validity, printable(run->path))}}));
  }
  return utc_text(*t + *profile.validity_s);
}

}  // namespace ccbench::report
