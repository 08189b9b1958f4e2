#include "ccbench/output_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "ccbench/errors.hpp"

namespace ccbench {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ccbench-output-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    m_dir = templ;
  }
  void TearDown() override { fs::remove_all(m_dir); }
  [[nodiscard]] const fs::path& dir() const { return m_dir; }

 private:
  fs::path m_dir;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(OutputFile, RefusesWhatIsNotARegularFile) {
  ASSERT_EQ(::mkfifo((dir() / "pipe").c_str(), 0644), 0);
  fs::create_directory(dir() / "d");
  fs::create_symlink("target", dir() / "link");
  for (const char* name : {"pipe", "d", "link"}) {
    EXPECT_THROW(check_output_path(dir() / name, "--out"), UsageError) << name;
    EXPECT_THROW(write_file_atomically(dir() / name, "x"), UsageError) << name;
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(dir() / "pipe")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir() / "link")));
  EXPECT_FALSE(fs::exists(dir() / "target"));
}

TEST_F(OutputFile, RefusesAMissingFolderAndAFileAsAFolder) {
  EXPECT_THROW(check_output_path(dir() / "missing" / "r.json", "--out"), UsageError);
  std::ofstream(dir() / "file") << "x";
  EXPECT_THROW(check_output_path(dir() / "file" / "r.json", "--out"), UsageError);
  EXPECT_NO_THROW(check_output_path(dir() / "new.json", "--out"));
  std::ofstream(dir() / "old.json") << "x";
  EXPECT_NO_THROW(check_output_path(dir() / "old.json", "--out"));  // a regular file is replaced
}

TEST_F(OutputFile, WritesAtomicallyAndLeavesNothingBeside) {
  write_file_atomically(dir() / "r.json", "first");
  write_file_atomically(dir() / "r.json", "second");
  EXPECT_EQ(read_all(dir() / "r.json"), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir()), fs::directory_iterator{}), 1);
}

TEST_F(OutputFile, AnExplicitPathIsHeldAgainstASecondClaim) {
  const auto path = dir() / "r.json";
  {
    const OutputClaim first = OutputClaim::explicit_path(path, "--out");
    EXPECT_TRUE(fs::exists(dir() / "r.json.lock"));
    EXPECT_THROW((void)OutputClaim::explicit_path(path, "--out"), UsageError);  // flock is per open file
  }
  EXPECT_FALSE(fs::exists(dir() / "r.json.lock"));
  EXPECT_NO_THROW((void)OutputClaim::explicit_path(path, "--out"));
}

TEST_F(OutputFile, DefaultNamesNeverCollide) {
  const std::string stem = (dir() / "bench-host-20260101T000000Z").string();
  const OutputClaim a = OutputClaim::default_path(stem);
  const OutputClaim b = OutputClaim::default_path(stem);   // the same second, a is still running
  std::ofstream(stem + "-3.json") << "an earlier result";  // a result that is there is never taken
  const OutputClaim c = OutputClaim::default_path(stem);
  EXPECT_EQ(a.path(), stem + ".json");
  EXPECT_EQ(b.path(), stem + "-2.json");
  EXPECT_EQ(c.path(), stem + "-4.json");
}

TEST_F(OutputFile, AClaimRemovesADeadWritersTemporaryFiles) {
  std::ofstream(dir() / "r.json.tmp.999999") << "half a document";
  std::ofstream(dir() / "other.json.tmp.999999") << "another result's";
  const OutputClaim claim = OutputClaim::explicit_path(dir() / "r.json", "--out");
  EXPECT_FALSE(fs::exists(dir() / "r.json.tmp.999999"));
  EXPECT_TRUE(fs::exists(dir() / "other.json.tmp.999999"));
}

/// A child process that holds a claim on `path` until `signal` ends it (sent to its process group when
/// `group`, as mpirun's SIGKILL is); returns how it ended (waitpid status).
int status_of_a_claim_ended_by(const fs::path& path, int signal, bool group = false) {
  std::array<int, 2> ready{};
  if (::pipe(ready.data()) != 0) {
    return -1;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    const OutputClaim claim = OutputClaim::explicit_path(path, "--out");
    const char byte = 1;
    (void)::write(ready[1], &byte, 1);
    for (;;) {
      ::pause();
    }
  }
  char byte = 0;
  (void)::read(ready[0], &byte, 1);
  ::close(ready[0]);
  ::close(ready[1]);
  ::kill(group ? -child : child, signal);
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

/// Whether `path` is gone within 30 s: the helper that removes a killed holder's lock file runs on its own.
bool gone_soon(const fs::path& path) {
  for (int i = 0; i < 3000 && fs::exists(path); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !fs::exists(path);
}

// mpirun and srun end a job's ranks with SIGTERM before SIGKILL: the lock file goes with the process, which
// still ends by the signal (its exit status unchanged).
TEST_F(OutputFile, AnEndingSignalRemovesTheLockFileAndStillEndsTheProcess) {
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
    const auto path = dir() / fmt::format("r{}.json", signal);
    const int status = status_of_a_claim_ended_by(path, signal);
    ASSERT_TRUE(WIFSIGNALED(status)) << signal;
    EXPECT_EQ(WTERMSIG(status), signal);
    EXPECT_FALSE(fs::exists(path.string() + ".lock")) << strsignal(signal);
  }
}

// No handler sees SIGKILL (Open MPI 4.1's mpirun sends it to each rank's process group milliseconds after
// SIGTERM): the helper, in a session of its own, removes the lock file once the holder is gone.
TEST_F(OutputFile, AHolderKilledWithSigkillLeavesNoLockFile) {
  for (const bool group : {false, true}) {
    const auto killed = dir() / fmt::format("killed-{}.json", group ? "group" : "process");
    const int status = status_of_a_claim_ended_by(killed, SIGKILL, group);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    EXPECT_TRUE(gone_soon(killed.string() + ".lock")) << (group ? "its process group killed" : "it alone killed");
    EXPECT_NO_THROW((void)OutputClaim::explicit_path(killed, "--out"));
  }
}

// The helper removes only a file that names its dead holder: a stale lock file of another run (here one
// whose holder never wrote it) is left for the next run to take over, as before.
TEST_F(OutputFile, AStaleLockFileIsTakenOverAndKeptWhileHeld) {
  const auto path = dir() / "r.json";
  std::ofstream(path.string() + ".lock") << "pid 999999\n";
  {
    const OutputClaim claim = OutputClaim::explicit_path(path, "--out");
    EXPECT_TRUE(fs::exists(path.string() + ".lock"));
    std::ifstream in(path.string() + ".lock");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, fmt::format("pid {}\n", ::getpid()));
  }
  EXPECT_FALSE(fs::exists(path.string() + ".lock"));
}

}  // namespace
}  // namespace ccbench
