#include "ccbench/topo/cpulist.hpp"

#include <algorithm>
#include <charconv>

namespace ccbench::topo {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < 0) {
    return std::nullopt;
  }
  return value;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::optional<std::vector<int>> parse_cpulist(std::string_view text) {
  text = trim(text);
  std::vector<int> cpus;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto dash = item.find('-');
    const auto first = parse_int(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_int(item.substr(dash + 1));
    if (!first || !last || *last < *first) {
      return std::nullopt;
    }
    for (int cpu = *first; cpu <= *last; ++cpu) {
      cpus.push_back(cpu);
    }
  }
  std::ranges::sort(cpus);
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpulist(std::vector<int> cpus) {
  std::ranges::sort(cpus);
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ',';
    }
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-' + std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace ccbench::topo
