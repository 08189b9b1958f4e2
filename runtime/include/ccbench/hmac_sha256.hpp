#pragma once
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the roll call's message authentication.
// Small and self-contained because the project has no crypto library among its dependencies;
// tested against the FIPS 180-4 examples and the RFC 4231 vectors.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ccbench {

using Sha256Digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::uint8_t> bytes);
  void update(std::string_view text);
  [[nodiscard]] Sha256Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> m_state{};
  std::array<std::uint8_t, 64> m_block{};
  std::size_t m_used = 0;      // bytes in m_block
  std::uint64_t m_length = 0;  // bytes hashed so far
};

[[nodiscard]] Sha256Digest sha256(std::string_view text);
[[nodiscard]] Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view message);
/// Lower-case hexadecimal.
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
/// Compares in time that depends only on the lengths, not on where the texts differ.
[[nodiscard]] bool equal_in_constant_time(std::string_view a, std::string_view b);

}  // namespace ccbench
