#pragma once
// The checking helper for NCCL (CUDA's is ccbench::cuda::check): a failed call throws BackendError naming
// the call and the library's own words for the error. Nothing here prints.
#include <nccl.h>

#include <string>
#include <string_view>

#include "ccbench/errors.hpp"
#include "nccl_api.hpp"

namespace ccbench::nccl_detail {

/// "what failed: <ncclGetErrorString> (<ncclGetLastError>)"; `comm` may be null.
inline std::string nccl_error_message(ncclResult_t result, ncclComm_t comm, std::string_view what) {
  std::string message = std::string(what) + " failed: " + nccl().GetErrorString(result);
  const char* last = nccl().GetLastError(comm);
  if (last != nullptr && *last != '\0') {
    message += std::string(" (") + last + ")";
  }
  if (result == ncclSystemError || result == ncclRemoteError || result == ncclInternalError) {
    message += "; run with NCCL_DEBUG=WARN for details";
  }
  return message;
}

/// Throws on anything but ncclSuccess; calls on the communicator go through Communicator::complete().
inline void nccl_check(ncclResult_t result, ncclComm_t comm, std::string_view what) {
  if (result != ncclSuccess) {
    throw BackendError(nccl_error_message(result, comm, what));
  }
}

}  // namespace ccbench::nccl_detail
