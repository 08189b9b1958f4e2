#pragma once
// The helper that removes a held result path's lock file when its holder dies in a way no signal handler
// sees: SIGKILL (Open MPI 4.1's mpirun sends it a few milliseconds after SIGTERM once any local rank has
// died, long before a busy rank 0 runs its handler), the OOM killer, `kill -9`.
//
// The helper is this same executable, started with posix_spawn (no fork: no copy of pages that MPI or
// verbs may have registered) in its own session, so a kill of the job's process group misses it, and at
// SCHED_IDLE, so it never takes a CPU the measurement wants. It waits
// on one end of a socket pair whose other end only the holder has: a byte means "released, do nothing";
// end of file without one means the holder is gone. It then removes the lock file only while it can take
// the flock itself (no live run holds it) and the file still names the dead holder ("pid N"), so a lock
// file another run has made in the meantime is never touched.
#include <sys/stat.h>

#include <string>

#include "ccbench/output_file.hpp"  // LockReaper

namespace ccbench::detail {

/// Whether `path` still names the file `held` describes (fstat of a descriptor opened on it): false once it
/// was removed, or replaced by another file.
inline bool still_names(const char* path, const struct stat& held) {
  struct stat now {};
  return ::lstat(path, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino;
}

/// Starts the helper for `lock_path` (held by this process, whose pid the file names). Never throws: where
/// it cannot start (no /proc, no processes left), the lock file is left to the signal handlers and to the
/// next run, as before.
LockReaper start_lock_reaper(const std::string& lock_path);

/// Tells the helper the lock was let go of (it then ends without touching anything), and reaps it if it has.
void dismiss_lock_reaper(LockReaper& reaper) noexcept;

}  // namespace ccbench::detail
