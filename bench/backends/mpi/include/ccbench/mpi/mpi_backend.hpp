#pragma once
// The MPI backend: host memory, MPI collectives, and an MPI_Sendrecv ring for sendrecv.
#include <memory>

#include "ccbench/backend.hpp"
#include "ccbench/mpi/mpi_group.hpp"

namespace ccbench {

std::unique_ptr<Backend> make_mpi_backend(MpiGroup& group);

}  // namespace ccbench
