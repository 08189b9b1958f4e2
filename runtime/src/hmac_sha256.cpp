#include "ccbench/hmac_sha256.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace ccbench {
namespace {

constexpr std::array<std::uint32_t, 64> kRound{
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
constexpr std::array<std::uint32_t, 8> kInitial{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
constexpr std::size_t kBlock = 64;

std::span<const std::uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};  // NOLINT(*-reinterpret-cast)
}

}  // namespace

Sha256::Sha256() : m_state(kInitial) {}

void Sha256::compress(const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    const std::uint8_t* p = block + 4 * i;  // NOLINT(*-pointer-arithmetic)
    w[i] = (std::uint32_t{p[0]} << 24U) | (std::uint32_t{p[1]} << 16U) | (std::uint32_t{p[2]} << 8U) |  // NOLINT
           std::uint32_t{p[3]};                                                                         // NOLINT
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3U);
    const std::uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10U);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = m_state;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t t1 =
        h + (std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const std::uint32_t t2 = (std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add{a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < 8; ++i) {
    m_state[i] += add[i];
  }
}

void Sha256::update(std::span<const std::uint8_t> bytes) {
  m_length += bytes.size();
  for (const std::uint8_t byte : bytes) {
    m_block[m_used++] = byte;
    if (m_used == kBlock) {
      compress(m_block.data());
      m_used = 0;
    }
  }
}

void Sha256::update(std::string_view text) { update(bytes_of(text)); }

Sha256Digest Sha256::finish() {
  const std::uint64_t bits = m_length * 8;
  const std::array<std::uint8_t, 1> one{0x80};
  update(one);
  const std::array<std::uint8_t, 1> zero{0};
  while (m_used != kBlock - 8) {
    update(zero);
  }
  std::array<std::uint8_t, 8> length{};
  for (std::size_t i = 0; i < 8; ++i) {
    length[i] = static_cast<std::uint8_t>(bits >> (56U - 8U * i));
  }
  update(length);
  Sha256Digest out{};
  for (std::size_t i = 0; i < 32; ++i) {
    out[i] = static_cast<std::uint8_t>(m_state[i / 4] >> (24U - 8U * (i % 4)));
  }
  return out;
}

Sha256Digest sha256(std::string_view text) {
  Sha256 h;
  h.update(text);
  return h.finish();
}

Sha256Digest hmac_sha256(std::span<const std::uint8_t> key, std::string_view message) {
  std::array<std::uint8_t, kBlock> block{};
  if (key.size() > kBlock) {
    Sha256 k;
    k.update(key);
    const Sha256Digest hashed = k.finish();
    std::copy(hashed.begin(), hashed.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<std::uint8_t, kBlock> inner_pad{};
  std::array<std::uint8_t, kBlock> outer_pad{};
  for (std::size_t i = 0; i < kBlock; ++i) {
    inner_pad[i] = block[i] ^ 0x36U;
    outer_pad[i] = block[i] ^ 0x5cU;
  }
  Sha256 inner;
  inner.update(inner_pad);
  inner.update(message);
  const Sha256Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(outer_pad);
  outer.update(inner_digest);
  return outer.finish();
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
  if (a.size() != b.size()) {
    return false;
  }
  unsigned difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned>(static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]));
  }
  return difference == 0;
}

}  // namespace ccbench
