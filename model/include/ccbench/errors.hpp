#pragma once
// Typed errors. Each maps to one exit code (see exit_code()).
#include <stdexcept>
#include <string>

namespace ccbench {

/// Bad input: one line that says what is wrong and how to fix it; exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An operation did not complete within --timeout; exit code 3.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A vendor library call failed (MPI, CUDA, NCCL); exit code 1.
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitTimeout = 3;

}  // namespace ccbench
