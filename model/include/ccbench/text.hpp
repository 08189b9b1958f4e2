#pragma once
// Text every part prints: input made safe for a terminal, UTF-8 sequences, and byte sizes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ccbench {

/// An ASCII control character (ESC included): what must not reach a terminal from input.
constexpr bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
std::size_t utf8_length(std::string_view text, std::size_t i);

/// ASCII lower case ("InfiniBand" -> "infiniband").
std::string lower(std::string_view text);

/// Replaces control characters (ESC included) and invalid UTF-8 with '?', so input cannot steer a terminal.
std::string printable(std::string_view text);

enum class SizeStyle {
  Short,   // 8 -> "8", 4096 -> "4K", 3 << 20 -> "3M": flags and their messages, copy_bench's names
  Binary,  // 8 -> "8 B", 4096 -> "4 KiB", 3 << 20 -> "3 MiB": the report's tables and messages
};
/// A byte count in the largest binary unit (up to T) that divides it exactly; 1536 -> "1536" / "1536 B".
std::string format_size(std::uint64_t bytes, SizeStyle style);

}  // namespace ccbench
