#include "lock_reaper.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

namespace ccbench::detail {

namespace {

constexpr const char* kReaperFlag = "--ccbench-lock-reaper";
constexpr int kReaperFd = 3;  // the helper's end of the socket pair, in the helper
constexpr char kReleased = 'r';
constexpr int kFlockRetries = 400;  // 2 s for a dying holder's lock to go; a live run's stays held
constexpr long kFlockRetryNs = 5'000'000;

/// Closes every descriptor above kReaperFd: what the helper inherited (MPI's sockets, the job's pipes) is
/// not its to hold.
void close_inherited() {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, kReaperFd + 1, ~0U, 0) == 0) {
    return;
  }
#endif
  const long most = ::sysconf(_SC_OPEN_MAX);
  for (int fd = kReaperFd + 1; fd < (most > 0 && most < 65536 ? most : 65536); ++fd) {
    ::close(fd);
  }
}

/// The helper: waits for its holder, then removes the lock file the holder left (see lock_reaper.hpp).
void reap(pid_t holder, const char* lock) {
  // Named apart from the ranks in top and ps (exec of /proc/self/exe would name it "exe"); pidof, which
  // reads /proc/PID/exe, still counts it with the bench's processes: tell ranks by OMPI_COMM_WORLD_RANK.
  ::prctl(PR_SET_NAME, "ccbench-lockrm", 0, 0, 0);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) {
    ::signal(sig, SIG_IGN);  // a launcher that signals every process of the job must not end it first
  }
  close_inherited();
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(kReaperFd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    return;  // let go of by its holder, which removed the file itself
  }
  const int fd = ::open(lock, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return;  // removed (by the holder's signal handler, or a run that took it over)
  }
  struct stat held {};
  std::array<char, 64> text{};
  const std::string expected = "pid " + std::to_string(holder) + "\n";
  // The holder closes its descriptors in order as it dies: this end of the pair may close before its lock does.
  const timespec tick{0, kFlockRetryNs};
  bool locked = false;
  for (int i = 0; i < kFlockRetries && !(locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0); ++i) {
    ::nanosleep(&tick, nullptr);
  }
  if (locked && ::fstat(fd, &held) == 0 &&
      ::pread(fd, text.data(), text.size() - 1, 0) == static_cast<ssize_t>(expected.size()) &&
      expected == text.data() && still_names(lock, held)) {
    ::unlink(lock);  // still flocked: a run that opened it meanwhile sees it replaced and retries
  }
  ::close(fd);
}

/// Runs before main() in every program that can hold a result path: the helper is that program, started
/// with kReaperFlag. glibc passes argc/argv to ELF constructors.
__attribute__((constructor(101))) void run_if_reaper(int argc, char** argv, char** /*envp*/) {
  if (argc == 4 && argv != nullptr && std::strcmp(argv[1], kReaperFlag) == 0) {
    char* end = nullptr;
    const long holder = std::strtol(argv[2], &end, 10);
    if (end != argv[2] && *end == '\0' && holder > 0) {
      reap(static_cast<pid_t>(holder), argv[3]);
    }
    ::_exit(0);
  }
}

}  // namespace

LockReaper start_lock_reaper(const std::string& lock_path) {
  std::array<int, 2> pair{-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair.data()) != 0) {
    return {};
  }
  int theirs = pair[1];
  if (theirs <= kReaperFd) {  // so that dup2 onto kReaperFd always clears FD_CLOEXEC in the child
    theirs = ::fcntl(pair[1], F_DUPFD_CLOEXEC, kReaperFd + 1);
    ::close(pair[1]);
  }
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, theirs, kReaperFd);
  sigset_t none{};
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attr, &none);
  // Its own session (and so its own process group): mpirun's kill(-pgid, SIGKILL) of the rank misses it.
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  const std::string holder = std::to_string(::getpid());
  std::array<char*, 5> argv{const_cast<char*>("ccbench-lock-reaper"),  // NOLINT(cppcoreguidelines-pro-type-const-cast)
                            const_cast<char*>(kReaperFlag),            // NOLINT(cppcoreguidelines-pro-type-const-cast)
                            const_cast<char*>(holder.c_str()),         // NOLINT(cppcoreguidelines-pro-type-const-cast)
                            const_cast<char*>(lock_path.c_str()),      // NOLINT(cppcoreguidelines-pro-type-const-cast)
                            nullptr};
  // Only what loading the program needs: no OMPI_COMM_WORLD_RANK, so nothing takes the helper for a rank.
  std::string library_path;
  std::array<char*, 2> env{nullptr, nullptr};
  if (const char* value = std::getenv("LD_LIBRARY_PATH"); value != nullptr) {
    library_path = std::string{"LD_LIBRARY_PATH="} + value;
    env[0] = library_path.data();
  }
  // Spawned from a thread of its own set to SCHED_IDLE, whose policy the helper inherits: it runs only on CPU
  // time nothing else wants, so its start (loading this program) never takes a core from the measurement
  // (rdma.verbs, in a TCG guest with the ranks pinned, read ours/perftest 1.7 with the helper at normal
  // priority). posix_spawnattr_setschedpolicy takes no SCHED_IDLE; a refused one leaves normal priority.
  pid_t pid = -1;
  int err = EBADF;
  if (theirs >= 0) {
    std::thread([&] {
      sched_param none_above{};
      (void)::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &none_above);
      err = ::posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argv.data(), env.data());
    }).join();
  }
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (theirs >= 0) {
    ::close(theirs);
  }
  if (err != 0) {
    ::close(pair[0]);
    return {};
  }
  return {pid, pair[0]};
}

void dismiss_lock_reaper(LockReaper& reaper) noexcept {
  if (reaper.fd >= 0) {
    (void)::send(reaper.fd, &kReleased, 1, MSG_NOSIGNAL);
    ::close(reaper.fd);
    reaper.fd = -1;
  }
  if (reaper.pid > 0) {
    // Reaped if it has already read the byte; else left (SCHED_IDLE: it may wait for a free CPU): it ends on
    // its own, touching nothing, and is reaped when this process ends.
    (void)::waitpid(reaper.pid, nullptr, WNOHANG);
    reaper.pid = -1;
  }
}

}  // namespace ccbench::detail
