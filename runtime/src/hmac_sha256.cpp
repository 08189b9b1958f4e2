#include "ccbench/hmac_sha256.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace ccbench {

Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view message) {
  Sha256Digest digest{};
  unsigned int length = 0;
  const unsigned char* done =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()),  // NOLINT(*-reinterpret-cast)
           message.size(), digest.data(), &length);
  if (done == nullptr || length != digest.size()) {
    throw std::runtime_error("HMAC-SHA256 failed in libcrypto");
  }
  return digest;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    text.push_back(kDigits[b >> 4U]);
    text.push_back(kDigits[b & 0xfU]);
  }
  return text;
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

void wipe(std::span<std::uint8_t> bytes) noexcept { OPENSSL_cleanse(bytes.data(), bytes.size()); }

}  // namespace ccbench
