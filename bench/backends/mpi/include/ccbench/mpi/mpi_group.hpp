#pragma once
// MPI start-up and the Group the runner uses, over MPI_COMM_WORLD (or a split of it).
#include <mpi.h>

#include <memory>
#include <string>
#include <string_view>

#include "ccbench/group.hpp"
#include "ccbench/version.hpp"

namespace ccbench {

/// MPI_Init_thread / MPI_Finalize. Errors on MPI_COMM_WORLD are returned, not fatal, so they
/// become exceptions with the MPI error string.
class MpiContext {
 public:
  MpiContext(int& argc, char**& argv);
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;
  MpiContext(MpiContext&&) = delete;
  MpiContext& operator=(MpiContext&&) = delete;
  ~MpiContext();
  /// Ends every rank of the job at once with this exit code (MPI_Abort).
  [[noreturn]] static void abort(int exit_code);
  /// MPI_Finalize, given `within_s` seconds: it waits on the launcher, and a stopped mpirun would
  /// hold a rank whose results are written for as long as it stays stopped. Past that, this rank
  /// says so on stderr and exits with `exit_code`.
  static void finalize(double within_s, int exit_code, std::string_view program);
};

/// Throws BackendError naming `what` when an MPI call failed.
void mpi_check(int rc, const char* what);

/// "Open MPI v4.1.4" (first line of MPI_Get_library_version).
std::string mpi_library_version();

/// --version's line for MPI: the library loaded (its first line and file) beside the headers built
/// against. MPI_Get_library_version may be called before MPI_Init.
LibraryLines mpi_library_lines();

class MpiGroup final : public Group {
 public:
  /// A group over `comm`; with `owned` it frees the communicator, else the caller keeps it
  /// (MPI_COMM_WORLD).
  explicit MpiGroup(MPI_Comm comm, bool owned = false);
  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;
  MpiGroup(MpiGroup&&) = delete;
  MpiGroup& operator=(MpiGroup&&) = delete;
  ~MpiGroup() override;
  /// Collective over this group: the ranks with the same color form a new group, ordered by
  /// `key`; a rank with a negative color gets nullptr (it takes part in no group).
  std::unique_ptr<MpiGroup> split(int color, int key);
  [[nodiscard]] int rank() const override { return m_rank; }
  [[nodiscard]] int size() const override { return m_size; }
  void barrier() override;
  void max_all(std::span<double> values) override;
  void sum_all(std::span<std::uint64_t> values) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
  std::vector<std::string> all_gather(const std::string& mine) override;
  [[nodiscard]] MPI_Comm comm() const { return m_comm; }

 private:
  MPI_Comm m_comm;
  bool m_owned = false;
  int m_rank = 0;
  int m_size = 1;
};

}  // namespace ccbench
