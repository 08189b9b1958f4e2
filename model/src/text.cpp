#include "ccbench/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace ccbench {

std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  std::size_t len = 0;
  if (c < 0x80U) {
    return 1;
  }
  if ((c & 0xE0U) == 0xC0U && c >= 0xC2U) {
    len = 2;
  } else if ((c & 0xF0U) == 0xE0U) {
    len = 3;
  } else if ((c & 0xF8U) == 0xF0U && c <= 0xF4U) {
    len = 4;
  } else {
    return 0;
  }
  if (i + len > text.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0U) != 0x80U) {
      return 0;
    }
  }
  return len;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto len = utf8_length(text, i);
    if (len == 0 || (len == 1 && is_control(static_cast<unsigned char>(text[i])))) {
      out += '?';
      i += 1;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

std::string format_size(std::uint64_t bytes, SizeStyle style) {
  static constexpr std::array<std::string_view, 5> kShort = {"", "K", "M", "G", "T"};
  static constexpr std::array<std::string_view, 5> kBinary = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  std::uint64_t value = bytes;
  while (unit + 1 < kShort.size() && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return style == SizeStyle::Short ? fmt::format("{}{}", value, kShort.at(unit))
                                   : fmt::format("{} {}", value, kBinary.at(unit));
}

}  // namespace ccbench
