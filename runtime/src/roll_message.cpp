#include "ccbench/roll_message.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "ccbench/errors.hpp"
#include "ccbench/hmac_sha256.hpp"

namespace ccbench {
namespace {

constexpr std::array<std::string_view, 4> kVerbs{"PING", "HERE", "NOTE", "DONE"};
constexpr std::size_t kMacHex = 64;
constexpr int kMaxSender = 1 << 24;

std::string_view verb_text(RollVerb verb) { return kVerbs.at(static_cast<std::size_t>(verb)); }

std::optional<RollVerb> verb_of(std::string_view text) {
  for (std::size_t i = 0; i < kVerbs.size(); ++i) {
    if (kVerbs[i] == text) {
      return static_cast<RollVerb>(i);
    }
  }
  return std::nullopt;
}

std::string mac_of(const RollKey& key, std::string_view head, std::string_view body) {
  std::string signed_text;
  signed_text.reserve(head.size() + 1 + body.size());
  signed_text.append(head).append("\n").append(body);
  return to_hex(hmac_sha256(key, signed_text));
}

/// Splits on single spaces; an empty field (two spaces, a leading or trailing space) makes it fail.
std::optional<std::vector<std::string_view>> fields_of(std::string_view head) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = head.find(' ', start);
    const std::string_view field = head.substr(start, end == std::string_view::npos ? end : end - start);
    if (field.empty()) {
      return std::nullopt;
    }
    out.push_back(field);
    if (end == std::string_view::npos) {
      return out;
    }
    start = end + 1;
  }
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {  // NOLINT(*-pointer-arithmetic)
    return std::nullopt;
  }
  return value;
}

}  // namespace

RollKey::~RollKey() { wipe(*this); }

RollKey random_roll_key() {
  RollKey key{};
  std::size_t got = 0;
  while (got < key.size()) {
    const ssize_t n = ::getrandom(key.data() + got, key.size() - got, 0);  // NOLINT(*-pointer-arithmetic)
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw BackendError(fmt::format("roll call: getrandom: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  return key;
}

std::string seal(const RollKey& key, const RollMessage& message) {
  const std::string head = fmt::format("{} {} {} {}", kRollMagic, verb_text(message.verb), message.sender, message.seq);
  return fmt::format("{} {}\n{}", head, mac_of(key, head, message.body), message.body);
}

std::optional<RollMessage> unseal(const RollKey& key, std::string_view datagram) {
  const std::size_t line_end = datagram.find('\n');
  if (line_end == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view line = datagram.substr(0, line_end);
  const auto fields = fields_of(line);
  if (!fields || fields->size() != 5 || (*fields)[0] != kRollMagic || (*fields)[4].size() != kMacHex) {
    return std::nullopt;
  }
  const auto verb = verb_of((*fields)[1]);
  const auto sender = number<int>((*fields)[2]);
  const auto seq = number<std::uint64_t>((*fields)[3]);
  if (!verb || !sender || *sender < 0 || *sender >= kMaxSender || !seq) {
    return std::nullopt;
  }
  const std::string_view head = line.substr(0, line.size() - kMacHex - 1);
  const std::string_view body = datagram.substr(line_end + 1);
  if (!equal_in_constant_time(mac_of(key, head, body), (*fields)[4])) {
    return std::nullopt;
  }
  return RollMessage{*verb, *sender, *seq, std::string(body)};
}

bool ReplayGuard::fresh(int sender, std::uint64_t seq) {
  auto [it, inserted] = m_last.try_emplace(sender, seq);
  if (inserted) {
    return true;
  }
  if (seq <= it->second) {
    return false;
  }
  it->second = seq;
  return true;
}

}  // namespace ccbench
