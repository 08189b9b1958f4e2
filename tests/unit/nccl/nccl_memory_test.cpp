// The NCCL backend's buffers under -R against a recording stand-in libnccl (issue 38, section 1): registered
// memory is allocated and registered once for the sweep's largest case and freed only after the communicator
// has ended, so no range NCCL has registered is ever handed out again while the communicator lives.
#include "nccl_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ccbench/case_spec.hpp"
#include "ccbench/group.hpp"
#include "communicator.hpp"
#include "fake_nccl_client.hpp"
#include "nccl_ops.hpp"

namespace ccbench::nccl_detail {
namespace {

using testing::FakeNccl;

/// The backend's members in its order: the buffers outlive the communicator, and are deregistered before it ends.
struct Backend {
  explicit Backend(Registration mode, bool blocking = true)
      : send(mode, "send buffer"), recv(mode, "receive buffer"), comm(ncclUniqueId{}, 2, 0, 10.0, blocking) {}
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  Backend(Backend&&) = delete;
  Backend& operator=(Backend&&) = delete;
  ~Backend() {
    send.release(comm);
    recv.release(comm);
  }
  void prepare(const CaseSpec& spec) {
    const Footprint need = footprint(spec, comm.size());
    send.reserve(need.send_bytes, comm);
    recv.reserve(need.recv_bytes, comm);
  }
  NcclMemory send;
  NcclMemory recv;
  Communicator comm;
};

/// all_reduce of float32 from 1 KiB to 64 MiB, out of place and in place: nccl-tests' -b 1K -e 64M -f 4.
std::vector<CaseSpec> sweep() {
  std::vector<CaseSpec> out;
  for (std::uint64_t bytes = 1024; bytes <= (std::uint64_t{64} << 20); bytes *= 4) {
    for (const bool in_place : {false, true}) {
      CaseSpec spec;
      spec.collective = Collective::AllReduce;
      spec.in_place = in_place;
      spec.count = bytes / 4;
      out.push_back(spec);
    }
  }
  return out;
}

std::ptrdiff_t position(const std::vector<std::string>& log, const std::string& text) {
  const auto it =
      std::find_if(log.begin(), log.end(), [&](const auto& l) { return l.find(text) != std::string::npos; });
  return it == log.end() ? -1 : it - log.begin();
}

TEST(NcclMemory, RegistersOnceForTheSweepsLargestCaseAndFreesAfterTheCommunicator) {
  const FakeNccl fake;
  {
    Backend backend(Registration::Local);
    const auto cases = sweep();
    const Footprint largest = largest_footprint(cases, 2);
    EXPECT_EQ(largest.send_bytes, std::size_t{64} << 20);
    backend.send.plan(largest.send_bytes);
    backend.recv.plan(largest.recv_bytes);
    for (const CaseSpec& spec : cases) {
      backend.prepare(spec);
    }
    EXPECT_TRUE(backend.send.registered());
    EXPECT_EQ(backend.recv.bytes(), std::size_t{64} << 20);
  }
  const auto log = fake.log();
  EXPECT_EQ(fake.lines_with("ncclMemAlloc").size(), 2U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclMemAlloc 67108864").size(), 2U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommRegister").size(), 2U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommDeregister").size(), 2U) << fake.text();
  EXPECT_TRUE(fake.lines_with("HAZARD").empty()) << fake.text();
  const auto destroyed = position(log, "ncclCommDestroy");
  ASSERT_GE(destroyed, 0) << fake.text();
  EXPECT_LT(position(log, "ncclCommDeregister"), destroyed) << fake.text();
  EXPECT_GT(position(log, "ncclMemFree"), destroyed) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclMemFree").size(), 2U) << fake.text();
}

// A case beyond the plan (none was given) grows the allocation; the outgrown one is deregistered and kept, so
// the allocator never hands its range out again while NCCL may still hold a graph's registration of it.
TEST(NcclMemory, OutgrownRegisteredMemoryIsNeverHandedOutAgain) {
  const FakeNccl fake;
  {
    Backend backend(Registration::Symmetric);
    for (const CaseSpec& spec : sweep()) {
      backend.prepare(spec);
    }
  }
  EXPECT_TRUE(fake.lines_with("HAZARD").empty()) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommWindowRegister").size(), fake.lines_with("ncclMemAlloc").size());
  const auto log = fake.log();
  const auto destroyed = position(log, "ncclCommDestroy");
  ASSERT_GE(destroyed, 0) << fake.text();
  EXPECT_GT(position(log, "ncclMemFree"), destroyed) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclMemFree").size(), fake.lines_with("ncclMemAlloc").size()) << fake.text();
}

TEST(NcclMemory, NeedsThePlannedAllocationWhole) {
  const FakeNccl fake;
  Backend backend(Registration::Local);
  backend.recv.plan(std::size_t{64} << 20);
  EXPECT_EQ(backend.recv.growth(1024), std::size_t{64} << 20);
  backend.recv.reserve(1024, backend.comm);
  EXPECT_EQ(backend.recv.growth(1024), 0U);
  EXPECT_EQ(backend.recv.growth(std::size_t{128} << 20), std::size_t{128} << 20);  // the old one is kept
}

// Issue 38, section 2: on a non-blocking communicator a registration returns ncclSuccess with its work still
// running; the next registration (the receive buffer's) and the deregistrations must wait until it settles.
TEST(NcclMemory, SettlesANonBlockingCommunicatorAfterEachRegistration) {
  FakeNcclScript script;
  script.settle_polls = 3;
  const FakeNccl fake(script);
  {
    Backend backend(Registration::Symmetric, /*blocking=*/false);
    CaseSpec spec;
    spec.count = 1024;
    EXPECT_NO_THROW(backend.prepare(spec));
    EXPECT_TRUE(backend.send.registered());
    EXPECT_TRUE(backend.recv.registered());
  }
  EXPECT_TRUE(fake.lines_with("MISUSE").empty()) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommWindowRegister").size(), 2U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommWindowDeregister").size(), 2U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommDestroy").size(), 1U) << fake.text();  // finalized cleanly, not aborted
}

/// Rank 0 of two; the other rank's part of every max_all is `other`.
class TwoRanks final : public Group {
 public:
  explicit TwoRanks(std::vector<double> other) : m_other(std::move(other)) {}
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 2; }
  void barrier() override {}
  void max_all(std::span<double> values) override {
    for (std::size_t i = 0; i < values.size() && i < m_other.size(); ++i) {
      values[i] = std::max(values[i], m_other[i]);
    }
  }
  void sum_all(std::span<std::uint64_t> /*values*/) override {}
  void broadcast(std::span<std::byte> /*bytes*/, int /*root*/) override {}
  std::vector<std::string> all_gather(const std::string& mine) override { return {mine, mine}; }

 private:
  std::vector<double> m_other;  // 1 where the other rank lacks a registration (send, receive)
};

// Issue 38, section 3: where NCCL has no symmetric memory (2.27/2.28 across nodes) ncclCommWindowRegister returns
// ncclSuccess with a null window. That is no registration, and the results and the header must say so.
TEST(NcclMemory, ANullWindowIsNoRegistration) {
  FakeNcclScript script;
  script.null_windows = 1;
  const FakeNccl fake(script);
  Backend backend(Registration::Symmetric);
  CaseSpec spec;
  spec.count = 1024;
  backend.prepare(spec);
  EXPECT_FALSE(backend.send.registered());
  EXPECT_FALSE(backend.recv.registered());
  TwoRanks group({0.0, 0.0});  // the other rank registered both
  const RegisteredEverywhere agreed = agree_registered(group, backend.send, backend.recv);
  EXPECT_FALSE(agreed.send);
  EXPECT_FALSE(agreed.recv);
  EXPECT_EQ(obtained_registration(Registration::Symmetric, false, agreed), Registration::None);
  EXPECT_EQ(obtained_registration(Registration::Symmetric, true, agreed), Registration::None);
  const std::string header = describe_registration(Registration::Symmetric, agreed);
  EXPECT_EQ(header.rfind("none (-R 2 asked; for the send and receive buffers on some rank ncclCommWindowRegister "
                         "returned a null window",
                         0),
            0U)
      << header;
}

// One rank's null handle is every rank's answer: the result is the group's (its leader writes it).
TEST(NcclMemory, TheRegistrationIsAgreedAcrossTheGroup) {
  const FakeNccl fake;
  Backend backend(Registration::Local);
  CaseSpec spec;
  spec.count = 1024;
  backend.prepare(spec);
  ASSERT_TRUE(backend.send.registered() && backend.recv.registered());
  TwoRanks all({0.0, 0.0});
  const RegisteredEverywhere everywhere = agree_registered(all, backend.send, backend.recv);
  EXPECT_EQ(obtained_registration(Registration::Local, false, everywhere), Registration::Local);
  EXPECT_EQ(describe_registration(Registration::Local, everywhere),
            "local (-R 1: NCCL registered every rank's buffers)");
  TwoRanks send_missing({1.0, 0.0});  // the other rank's send buffer got a null handle
  const RegisteredEverywhere partly = agree_registered(send_missing, backend.send, backend.recv);
  EXPECT_EQ(obtained_registration(Registration::Local, false, partly), Registration::None);
  EXPECT_EQ(obtained_registration(Registration::Local, true, partly), Registration::Local);  // in place: recv alone
}

}  // namespace
}  // namespace ccbench::nccl_detail
