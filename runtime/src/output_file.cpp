#include "ccbench/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "ccbench/errors.hpp"
#include "lock_reaper.hpp"

namespace ccbench {

namespace {

constexpr int kMaxDefaultNames = 1000;  // <stem>.json, <stem>-2.json, ... <stem>-1000.json
constexpr int kLockAttempts = 100;      // a lock file replaced under us this often is not a race
constexpr int kBusyWaits = 5;           // a held lock is asked for again this often before it counts as held
constexpr std::chrono::milliseconds kBusyWait{20};

// Paths removed when the process is ended by SIGTERM, SIGINT or SIGHUP: what mpirun (SIGTERM, then SIGKILL a
// second later, or ~4 ms later in Open MPI 4.1 once a local rank has died: lock_reaper.hpp covers that) and
// srun (SIGTERM, then SIGKILL after KillWait) send to every rank when they end a job that another rank ended
// or left. They are a held claim's lock file and a named temporary file between its link
// and its rename. Fixed slots, since a signal handler may only call async-signal-safe functions.
constexpr std::size_t kCleanupSlots = 8;
constexpr std::size_t kCleanupPathMax = 4096;
enum class SlotState : int { Free, Filling, Armed };
struct CleanupSlot {
  std::atomic<SlotState> state{SlotState::Free};  // lock-free, so the handler may read it
  std::array<char, kCleanupPathMax> path{};
};
static_assert(std::atomic<SlotState>::is_always_lock_free, "a signal handler reads the slots");
std::array<CleanupSlot, kCleanupSlots> g_cleanup;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
std::once_flag g_handlers_installed;               // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
constexpr std::array kEndingSignals{SIGTERM, SIGINT, SIGHUP};

extern "C" void remove_then_end(int sig) {
  for (auto& slot : g_cleanup) {
    if (slot.state.load() == SlotState::Armed) {
      ::unlink(slot.path.data());
    }
  }
  ::signal(sig, SIG_DFL);  // then ends as it would have without the handler
  ::raise(sig);
}

/// Only where the signal's action is still the default: a program's own handler, or SIG_IGN, is kept.
void install_ending_handlers() {
  for (const int sig : kEndingSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
      continue;
    }
    struct sigaction action {};
    action.sa_handler = remove_then_end;
    sigemptyset(&action.sa_mask);
    for (const int other : kEndingSignals) {
      sigaddset(&action.sa_mask, other);
    }
    ::sigaction(sig, &action, nullptr);
  }
}

/// Arms removal of `path` on an ending signal; returns the slot (-1 when none is free or the path is too long:
/// then the file is left as before, for the next run that holds the path to remove).
int remove_if_ended(const std::filesystem::path& path) {
  std::call_once(g_handlers_installed, install_ending_handlers);
  std::error_code ec;
  const std::string text = std::filesystem::absolute(path, ec).string();  // the handler does not know the cwd
  if (ec || text.size() >= kCleanupPathMax) {
    return -1;
  }
  for (std::size_t i = 0; i < g_cleanup.size(); ++i) {
    SlotState expected = SlotState::Free;
    if (g_cleanup[i].state.compare_exchange_strong(expected, SlotState::Filling)) {
      std::memcpy(g_cleanup[i].path.data(), text.c_str(), text.size() + 1);
      g_cleanup[i].state.store(SlotState::Armed);
      return static_cast<int>(i);
    }
  }
  return -1;
}

void disarm(int slot) {
  if (slot >= 0) {
    g_cleanup[static_cast<std::size_t>(slot)].state.store(SlotState::Free);
  }
}

std::filesystem::path folder_of(const std::filesystem::path& path) {
  const auto parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

std::filesystem::path lock_path_of(const std::filesystem::path& path) { return path.string() + ".lock"; }

std::string temp_prefix_of(const std::filesystem::path& path) { return path.filename().string() + ".tmp."; }

/// Refuses a path that is there and is not a regular file (lstat: a symlink is refused, not followed).
void refuse_non_regular(const std::filesystem::path& path, std::string_view flag) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      throw UsageError(
          fmt::format("{} {}: is {}; only a regular file is written (a new one, or one replacing "
                      "a regular file)",
                      flag, path.string(), file_kind(st.st_mode)));
    }
  } else if (errno != ENOENT) {
    throw UsageError(fmt::format("{} {}: cannot use it: {}", flag, path.string(), std::strerror(errno)));
  }
}

/// Whether the filesystem refused O_TMPFILE itself (then a named temporary file is used).
bool no_tmpfile_support(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

void check_folder(const std::filesystem::path& path, std::string_view flag) {
  const auto dir = folder_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw UsageError(fmt::format(
        "{} {}: its folder {} {}", flag, path.string(), dir.string(),
        errno == ENOENT ? std::string{"does not exist"} : fmt::format("cannot be used: {}", std::strerror(errno))));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw UsageError(fmt::format("{} {}: its folder {} is not a folder", flag, path.string(), dir.string()));
  }
  // Try it: access(2) says yes to root on a read-only folder, and knows nothing of read-only mounts.
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  const int err = errno;
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  int probe_err = err;
  if (no_tmpfile_support(err)) {  // the filesystem has no O_TMPFILE (or is /proc): try a named file
    const auto probe = dir / fmt::format(".ccbench-probe.{}", ::getpid());
    const int probe_fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    probe_err = errno;
    if (probe_fd >= 0) {
      ::close(probe_fd);
      ::unlink(probe.c_str());
      return;
    }
  }
  throw UsageError(fmt::format("{} {}: its folder {} is not writable: {}", flag, path.string(), dir.string(),
                               std::strerror(probe_err)));
}

std::string holder_of(int fd) {
  std::array<char, 64> buf{};
  const ssize_t n = ::pread(fd, buf.data(), buf.size() - 1, 0);
  std::string text(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text.empty() ? std::string{"another process"} : text;
}

/// Opens and flocks "<path>.lock". Returns the held descriptor, or -1 when a live run holds it
/// (`holder` then says which). Retries when the lock file was removed or replaced as we took it, and, when
/// `ask_again`, a few times over 100 ms when it is held (a dead run's helper may be removing it).
int hold_lock_file(const std::filesystem::path& path, std::string_view flag, std::string& holder, bool ask_again) {
  const auto lock = lock_path_of(path);
  int busy_waits = 0;
  for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat held {};
    if (fd < 0 || ::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      const int err = fd < 0 ? errno : EINVAL;
      if (fd >= 0) {
        ::close(fd);
      }
      throw UsageError(fmt::format("{} {}: cannot hold its lock {}: {}", flag, path.string(), lock.string(),
                                   err == EINVAL ? "not a regular file" : std::strerror(err)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      // A dead run's helper holds it for a moment while it removes it (lock_reaper.hpp): ask again once it
      // is gone, or after a short wait; a live run keeps it.
      const bool replaced = !detail::still_names(lock.c_str(), held);
      if (replaced || (ask_again && busy_waits++ < kBusyWaits)) {
        ::close(fd);
        if (!replaced) {
          std::this_thread::sleep_for(kBusyWait);
        }
        continue;
      }
      holder = holder_of(fd);
      ::close(fd);
      return -1;
    }
    if (detail::still_names(lock.c_str(), held)) {
      // For a second run's message, and for this run's helper, which removes only a file naming its holder.
      const std::string pid = fmt::format("pid {}\n", ::getpid());
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        holder.clear();
      }
      return fd;
    }
    ::close(fd);
  }
  throw std::runtime_error(fmt::format("cannot hold {}: it keeps being replaced", lock.string()));
}

/// Removes what a killed writer of `path` left: only called while holding its lock, so no live
/// writer of the same path can own one of these.
void remove_stale_temps(const std::filesystem::path& path) {
  const std::string prefix = temp_prefix_of(path);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && entry.is_regular_file(ec) && !entry.is_symlink(ec)) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

void write_all(int fd, std::string_view text, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
}

}  // namespace

std::string_view file_kind(mode_t mode) {
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISFIFO(mode)) {
    return "a named pipe";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  return S_ISDIR(mode) ? "a directory" : "not a regular file";
}

void check_output_path(const std::filesystem::path& path, std::string_view flag) {
  refuse_non_regular(path, flag);
  check_folder(path, flag);
}

OutputClaim OutputClaim::explicit_path(const std::filesystem::path& path, std::string_view flag) {
  check_output_path(path, flag);
  std::string holder;
  const int fd = hold_lock_file(path, flag, holder, true);
  if (fd < 0) {
    throw UsageError(
        fmt::format("{} {}: another run ({}) is writing it now; give another path", flag, path.string(), holder));
  }
  OutputClaim claim(path, fd);
  remove_stale_temps(path);
  claim.watch();
  return claim;
}

OutputClaim OutputClaim::default_path(const std::string& stem) {
  for (int n = 1; n <= kMaxDefaultNames; ++n) {
    const std::filesystem::path path = n == 1 ? stem + ".json" : fmt::format("{}-{}.json", stem, n);
    check_output_path(path, "the result path");
    std::string holder;
    const int fd = hold_lock_file(path, "the result path", holder, false);  // a held name: the next one
    if (fd < 0) {
      continue;  // a run started in the same second holds this name
    }
    OutputClaim claim(path, fd);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      remove_stale_temps(path);
      claim.watch();
      return claim;
    }
  }
  throw UsageError(fmt::format("{}.json and {} more names like it are taken: give --out", stem, kMaxDefaultNames - 1));
}

OutputClaim::OutputClaim(std::filesystem::path path, int lock_fd)
    : m_path(std::move(path)), m_lock_fd(lock_fd), m_cleanup_slot(remove_if_ended(lock_path_of(m_path))) {}

OutputClaim::OutputClaim(OutputClaim&& other) noexcept
    : m_path(std::move(other.m_path)),
      m_lock_fd(std::exchange(other.m_lock_fd, -1)),
      m_cleanup_slot(std::exchange(other.m_cleanup_slot, -1)),
      m_reaper(std::exchange(other.m_reaper, {})),
      m_made_folder(std::exchange(other.m_made_folder, {})) {}

OutputClaim& OutputClaim::operator=(OutputClaim&& other) noexcept {
  if (this != &other) {
    release();
    m_path = std::move(other.m_path);
    m_lock_fd = std::exchange(other.m_lock_fd, -1);
    m_cleanup_slot = std::exchange(other.m_cleanup_slot, -1);
    m_reaper = std::exchange(other.m_reaper, {});
    m_made_folder = std::exchange(other.m_made_folder, {});
  }
  return *this;
}

OutputClaim::~OutputClaim() { release(); }

void OutputClaim::watch() {
  std::error_code ec;
  const auto lock = std::filesystem::absolute(lock_path_of(m_path), ec);
  if (!ec) {
    m_reaper = detail::start_lock_reaper(lock.string());
  }
}

void OutputClaim::release() noexcept {
  // Disarmed first: once the lock file is gone, another run may make a new one at the same path.
  detail::dismiss_lock_reaper(m_reaper);
  disarm(std::exchange(m_cleanup_slot, -1));
  if (m_lock_fd >= 0) {
    ::unlink(lock_path_of(m_path).c_str());  // still held: whoever opened it since retries on the new one
    ::close(m_lock_fd);
    m_lock_fd = -1;
  }
  if (!m_made_folder.empty()) {
    ::rmdir(m_made_folder.c_str());  // fails, as it should, once the result is in it
    m_made_folder.clear();
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  refuse_non_regular(path, "cannot write");
  const std::filesystem::path named = path.string() + fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(folder_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  const bool anonymous = fd >= 0;
  int cleanup = -1;  // the named file, from its creation to its rename
  if (!anonymous && no_tmpfile_support(errno)) {
    cleanup = remove_if_ended(named);
    fd = ::open(named.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  }
  if (fd < 0) {
    const int err = errno;
    disarm(cleanup);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  }
  try {
    write_all(fd, text, path);
    if (anonymous) {  // give the finished file a name beside the result, then rename it over the result
      ::unlink(named.c_str());
      cleanup = remove_if_ended(named);
      const std::string self = fmt::format("/proc/self/fd/{}", fd);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, named.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
      }
    }
    if (::close(std::exchange(fd, -1)) != 0 || ::rename(named.c_str(), path.c_str()) != 0) {
      throw std::runtime_error(fmt::format("cannot replace {}: {}", path.string(), std::strerror(errno)));
    }
    disarm(cleanup);  // the name is now the result's
  } catch (...) {
    if (fd >= 0) {
      ::close(fd);
    }
    ::unlink(named.c_str());
    disarm(cleanup);
    throw;
  }
}

}  // namespace ccbench
