#pragma once
// The files ccbench writes (result documents, reports, JUnit XML): only ever a regular file, new or
// replacing a regular file, in a folder that exists and is writable; checked before any work, held
// against a second writer, and replaced atomically without a temporary file that outlives a killed
// writer.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace ccbench {

namespace detail {
/// The helper process that removes a held path's lock file when its holder dies unseen (SIGKILL): its pid
/// and the holder's end of the socket pair it waits on; -1 and -1 when none runs (src/lock_reaper.hpp).
struct LockReaper {
  pid_t pid = -1;
  int fd = -1;
};
}  // namespace detail

/// What a file that is not a regular one is, from its st_mode: "a character device", "a named
/// pipe", "a symbolic link", ... (the words every refusal of a path uses).
std::string_view file_kind(mode_t mode);

/// Throws UsageError (one line, naming `flag` and the path) when `path` exists and is not a regular
/// file (a device, a pipe, a socket, a symlink, a directory), or its folder is missing, not a folder,
/// or not writable (tried by creating a file there, so root and read-only mounts are judged rightly).
void check_output_path(const std::filesystem::path& path, std::string_view flag);

/// A result path held for one run: an advisory flock on "<path>.lock" beside it, which the kernel
/// releases when the process ends, so a killed run never blocks the next. While held, temporary
/// files that a killed writer of the same path left ("<path>.tmp.*") are removed. The lock file is
/// removed when the claim ends, when the process is ended by SIGTERM, SIGINT or SIGHUP (as mpirun and
/// srun end every rank of a job; a program's own handler for them is kept), and, by a helper process
/// that outlives it, when the process dies unseen (SIGKILL: Open MPI 4.1's mpirun sends it milliseconds
/// after SIGTERM). Only a kill of the helper too (a cgroup kill) leaves it, and the next run takes a
/// stale one over. write_file_atomically's named temporary file is removed on those signals too.
class OutputClaim {
 public:
  /// An explicit path (--out): refused (UsageError) when it is not a writable regular file path
  /// (check_output_path) or another live run holds it.
  static OutputClaim explicit_path(const std::filesystem::path& path, std::string_view flag);
  /// A default name "<stem>.json": the first of <stem>.json, <stem>-2.json, ... that no file and no
  /// live run holds, so two runs started in the same second never share a result.
  static OutputClaim default_path(const std::string& stem);

  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;
  OutputClaim(OutputClaim&& other) noexcept;
  OutputClaim& operator=(OutputClaim&& other) noexcept;
  ~OutputClaim();

  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }
  /// A folder made for this claim (results/), removed when the claim ends if it is still empty, so a
  /// run that stops before writing its result leaves nothing behind.
  void remove_if_left_empty(std::filesystem::path folder) { m_made_folder = std::move(folder); }

 private:
  OutputClaim(std::filesystem::path path, int lock_fd);
  void watch();  // starts the lock file's helper (detail::LockReaper), once the claim is the one returned
  void release() noexcept;

  std::filesystem::path m_path;
  int m_lock_fd = -1;
  int m_cleanup_slot = -1;      // the lock file's removal on an ending signal
  detail::LockReaper m_reaper;  // the lock file's removal when the process dies unseen (SIGKILL)
  std::filesystem::path m_made_folder;
};

/// Writes `text` to an unnamed file in `path`'s folder (O_TMPFILE; where the filesystem lacks it, a
/// named "<path>.tmp.<pid>"), flushes it to disk, links it beside `path` and renames it over `path`,
/// so a reader (or a crash) only ever sees a whole document, and a writer killed while writing leaves
/// nothing. Refuses (UsageError) a `path` that is there and not a regular file. Throws on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace ccbench
