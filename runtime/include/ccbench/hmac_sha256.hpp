#pragma once
// HMAC-SHA256 (RFC 2104) and a constant-time compare for the roll call's message authentication,
// from OpenSSL's libcrypto (HMAC, CRYPTO_memcmp), and the wiping of key material (OPENSSL_cleanse):
// no hand-written cryptography.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ccbench {

using Sha256Digest = std::array<std::uint8_t, 32>;

[[nodiscard]] Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view message);
/// Lower-case hexadecimal.
[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
/// Compares in time that depends only on the lengths, not on where the texts differ (CRYPTO_memcmp).
[[nodiscard]] bool equal_in_constant_time(std::string_view a, std::string_view b);
/// Overwrites `bytes` with zeros in a way the optimiser keeps (OPENSSL_cleanse).
void wipe(std::span<std::uint8_t> bytes) noexcept;

}  // namespace ccbench
