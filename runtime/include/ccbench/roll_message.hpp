#pragma once
// The roll call's datagrams (RollCall), authenticated with a key that only the job's ranks hold.
//
//   datagram = "CCBRC2 " VERB " " SENDER " " SEQ " " MAC "\n" BODY
//   MAC      = hex HMAC-SHA256(key, "CCBRC2 " VERB " " SENDER " " SEQ "\n" BODY)
//
// SENDER is the sending world rank; SEQ a number each sender counts up from 1 for every datagram
// it sends (its nonce). A receiver accepts a request (PING, NOTE) from a sender only with a SEQ
// above every one it accepted from that sender before, so a recorded datagram sent again is
// refused; an answer (HERE, DONE) names the SEQ of the request it answers, and the caller takes it
// only for a request of its own. Anything else (another magic, no or a wrong MAC, a malformed
// head) is not from this job: ignored, counted, never answered.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ccbench {

inline constexpr std::string_view kRollMagic = "CCBRC2";

/// The job's secret: 128 random bits that world rank 0 draws and shares over the job's own channel.
/// Every copy is wiped (OPENSSL_cleanse) when it ends.
class RollKey : public std::array<std::uint8_t, 16> {
 public:
  RollKey() : std::array<std::uint8_t, 16>{} {}
  RollKey(const RollKey&) = default;
  RollKey& operator=(const RollKey&) = default;
  RollKey(RollKey&&) = default;
  RollKey& operator=(RollKey&&) = default;
  ~RollKey();
};
/// From getrandom(2). Throws BackendError when the kernel gives none.
[[nodiscard]] RollKey random_roll_key();

enum class RollVerb { Ping, Here, Note, Done };

struct RollMessage {
  RollVerb verb = RollVerb::Ping;
  int sender = -1;
  std::uint64_t seq = 0;
  std::string body;
};

/// The datagram for `message`, with its MAC.
[[nodiscard]] std::string seal(const RollKey& key, const RollMessage& message);
/// The message a datagram carries when it is well formed and its MAC is right under `key`;
/// nullopt otherwise.
[[nodiscard]] std::optional<RollMessage> unseal(const RollKey& key, std::string_view datagram);

/// Refuses a request whose SEQ is not above the last one accepted from its sender.
class ReplayGuard {
 public:
  /// True (and remembered) when `seq` is new from `sender`.
  [[nodiscard]] bool fresh(int sender, std::uint64_t seq);

 private:
  std::map<int, std::uint64_t> m_last;
};

}  // namespace ccbench
