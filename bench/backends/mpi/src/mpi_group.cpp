#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "ccbench/errors.hpp"
#include "ccbench/mpi/mpi_group.hpp"

namespace ccbench {

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) {
    return;
  }
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  MPI_Error_string(rc, text.data(), &len);
  throw BackendError(fmt::format("{} failed: {}", what, std::string_view(text.data(), static_cast<std::size_t>(len))));
}

MpiContext::MpiContext(int& argc, char**& argv) {
  int provided = 0;
  mpi_check(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiContext::~MpiContext() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) {
    MPI_Finalize();
  }
}

void MpiContext::finalize(double within_s, int exit_code, std::string_view program) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    return;
  }
  std::thread([within_s, exit_code, name = std::string(program)] {
    std::this_thread::sleep_for(std::chrono::duration<double>(within_s));
    fmt::print(stderr,
               "{}: warning: MPI_Finalize did not return within {:g} s (is mpirun stopped?); the results are "
               "written: exiting {}\n",
               name, within_s, exit_code);
    std::fflush(stderr);
    std::_Exit(exit_code);
  }).detach();
  MPI_Finalize();
}

void MpiContext::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

std::string mpi_library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int len = 0;
  MPI_Get_library_version(text.data(), &len);
  std::string version(text.data(), static_cast<std::size_t>(len));
  version = version.substr(0, version.find_first_of(",\n"));
  return version;
}

LibraryLines mpi_library_lines() {
#if defined(OMPI_MAJOR_VERSION)
  const std::string built =
      fmt::format("Open MPI {}.{}.{}", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  const std::string built = fmt::format("MPICH {}", MPICH_VERSION);
#else
  const std::string built = fmt::format("MPI {}.{} headers", MPI_VERSION, MPI_SUBVERSION);
#endif
  const std::string file = library_file_of(reinterpret_cast<const void*>(&MPI_Get_library_version));
  return {{"mpi", fmt::format("{} loaded from {}, built with {}", mpi_library_version(),
                              file.empty() ? "the program (static)" : file, built)}};
}

MpiGroup::MpiGroup(MPI_Comm comm, bool owned) : m_comm(comm), m_owned(owned) {
  mpi_check(MPI_Comm_rank(comm, &m_rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm, &m_size), "MPI_Comm_size");
}

MpiGroup::~MpiGroup() {
  if (m_owned) {
    MPI_Comm_free(&m_comm);
  }
}

std::unique_ptr<MpiGroup> MpiGroup::split(int color, int key) {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split(m_comm, color < 0 ? MPI_UNDEFINED : color, key, &comm), "MPI_Comm_split");
  if (comm == MPI_COMM_NULL) {
    return nullptr;
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::make_unique<MpiGroup>(comm, true);
}

void MpiGroup::barrier() { mpi_check(MPI_Barrier(m_comm), "MPI_Barrier"); }

void MpiGroup::max_all(std::span<double> values) {
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, m_comm),
            "MPI_Allreduce(MAX)");
}

void MpiGroup::sum_all(std::span<std::uint64_t> values) {
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM, m_comm),
            "MPI_Allreduce(SUM)");
}

void MpiGroup::broadcast(std::span<std::byte> bytes, int root) {
  mpi_check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, root, m_comm), "MPI_Bcast");
}

std::vector<std::string> MpiGroup::all_gather(const std::string& mine) {
  const int len = static_cast<int>(std::min<std::size_t>(mine.size(), INT_MAX / 1024));
  std::vector<int> lengths(static_cast<std::size_t>(m_size));
  mpi_check(MPI_Allgather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, m_comm), "MPI_Allgather");
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t i = 1; i < lengths.size(); ++i) {
    offsets[i] = offsets[i - 1] + lengths[i - 1];
  }
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  mpi_check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, m_comm),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

}  // namespace ccbench
