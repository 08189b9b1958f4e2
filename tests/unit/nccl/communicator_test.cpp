// The NCCL communicator's abort against a recording stand-in libnccl (issue 38, sections 7 and 9): one thread
// owns the communicator. The hang guard's watchdog only asks; the rank's own polling loop releases the graph and
// calls ncclCommAbort, and its destructor aborts instead of finalizing once asked. NCCL allows ncclCommAbort from
// another thread only on a non-blocking communicator with no other thread inside NCCL.
#include "communicator.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ccbench/errors.hpp"
#include "fake_nccl_client.hpp"

namespace ccbench::nccl_detail {
namespace {

using testing::FakeNccl;

// A rank waits on a stream that never finishes (a hung op: its deadline far away); the watchdog asks for the
// abort while ncclCommGetAsyncError is being polled (slowed, so the two threads overlap).
TEST(Communicator, TheRanksOwnThreadAbortsWhenTheWatchdogAsks) {
  FakeNcclScript script;
  script.async_error_delay_us = 200;
  const FakeNccl fake(script);
  Communicator comm(ncclUniqueId{}, 2, 0, 60.0);
  std::thread::id released_on;
  comm.release_before_abort([&released_on] { released_on = std::this_thread::get_id(); });
  std::atomic<bool> polling{false};
  std::string error;
  std::thread::id rank_id;
  std::thread rank([&] {
    fake.name_thread("rank");
    rank_id = std::this_thread::get_id();
    try {
      comm.wait_until(
          [&polling] {
            polling = true;
            return false;
          },
          "a hung all_reduce");
    } catch (const TimeoutError& e) {
      error = e.what();
    } catch (const std::exception& e) {
      error = std::string("not a TimeoutError: ") + e.what();
    }
  });
  while (!polling) {
    std::this_thread::yield();
  }
  fake.name_thread("watchdog");
  comm.request_abort();
  rank.join();
  EXPECT_EQ(fake.lines_with("ncclCommAbort"), std::vector<std::string>{"rank: ncclCommAbort"}) << fake.text();
  EXPECT_TRUE(fake.lines_with("watchdog:").empty()) << fake.text();
  EXPECT_TRUE(fake.lines_with("CONCURRENT").empty()) << fake.text();
  EXPECT_EQ(released_on, rank_id);  // the graph released on the rank's thread, before the abort
  EXPECT_NE(error.find("the hang guard is ending the job"), std::string::npos) << error;
  EXPECT_THROW((void)comm.get(), BackendError);
}

// Asked while the rank was not polling (between ops): its destructor aborts rather than finalize (a blocking
// ncclCommFinalize would wait for the hung work), on its own thread, once.
TEST(Communicator, TheDestructorAbortsOnceAskedInsteadOfFinalizing) {
  const FakeNccl fake;
  int releases = 0;
  {
    Communicator comm(ncclUniqueId{}, 2, 0, 60.0);
    comm.release_before_abort([&releases] { ++releases; });
    std::thread watchdog([&] {
      fake.name_thread("watchdog");
      comm.request_abort();
    });
    watchdog.join();
  }
  EXPECT_EQ(fake.lines_with("ncclCommAbort"), std::vector<std::string>{"rank: ncclCommAbort"}) << fake.text();
  EXPECT_TRUE(fake.lines_with("ncclCommFinalize").empty()) << fake.text();
  EXPECT_EQ(releases, 1);
}

// Not asked: finalized and destroyed, nothing released.
TEST(Communicator, EndsCleanlyWhenNothingAsked) {
  const FakeNccl fake;
  int releases = 0;
  {
    Communicator comm(ncclUniqueId{}, 2, 0, 60.0);
    comm.release_before_abort([&releases] { ++releases; });
  }
  EXPECT_EQ(fake.lines_with("ncclCommFinalize").size(), 1U) << fake.text();
  EXPECT_EQ(fake.lines_with("ncclCommDestroy").size(), 1U) << fake.text();
  EXPECT_TRUE(fake.lines_with("ncclCommAbort").empty()) << fake.text();
  EXPECT_EQ(releases, 0);
}

}  // namespace
}  // namespace ccbench::nccl_detail
