#include "communicator.hpp"

#include <cmath>
#include <sstream>
#include <thread>

#include "ccbench/errors.hpp"
#include "nccl_check.hpp"

namespace ccbench::nccl_detail {
namespace {

namespace chrono = std::chrono;

// Longer than this is no limit at all (and would overflow steady_clock arithmetic).
constexpr double kNoLimitS = 1e9;
// Yield between polls for this long, then sleep kPollSleep between polls.
constexpr auto kPollSpin = chrono::milliseconds(20);
constexpr auto kPollSleep = chrono::microseconds(50);

std::string seconds_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

}  // namespace

Deadline::Deadline(double seconds) {
  if (std::isfinite(seconds) && seconds > 0.0 && seconds < kNoLimitS) {
    m_at = chrono::steady_clock::now() +
           chrono::duration_cast<chrono::steady_clock::duration>(chrono::duration<double>(seconds));
  }
}

bool Deadline::expired() const { return m_at && chrono::steady_clock::now() >= *m_at; }

void Poller::pause() {
  if (chrono::steady_clock::now() - m_start < kPollSpin) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(kPollSleep);
  }
}

Communicator::Communicator(const ncclUniqueId& id, int nranks, int rank, double timeout_s, bool blocking)
    : m_rank(rank), m_size(nranks), m_timeout_s(timeout_s) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking ? 1 : 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t result = nccl().CommInitRankConfig(&comm, nranks, id, rank, &config);
  m_comm = comm;
  if (result != ncclSuccess && result != ncclInProgress) {
    const std::string message =
        nccl_error_message(result, comm, "ncclCommInitRankConfig on rank " + std::to_string(rank));
    abort();
    throw BackendError(message);
  }
  wait_until([] { return true; }, std::string("communicator set-up"));  // non-blocking: until it is ready
}

void Communicator::abort() noexcept {
  m_abort.run([this] { abort_now(); });
}

void Communicator::abort_now() noexcept {
  if (const ncclComm_t comm = m_comm.exchange(nullptr); comm != nullptr) {
    (void)nccl().CommAbort(comm);
  }
}

Communicator::~Communicator() {
  if (m_comm.load() == nullptr) {  // aborted already
    return;
  }
  if (m_abort_requested.load()) {  // the job is being ended for a hang: no finalize that could wait on it
    abort();
    return;
  }
  bool clean = false;
  try {
    clean = finalize();
  } catch (...) {
    clean = false;
  }
  if (const ncclComm_t comm = clean ? m_comm.exchange(nullptr) : nullptr; comm != nullptr) {
    (void)nccl().CommDestroy(comm);
    return;
  }
  abort();
}

ncclComm_t Communicator::get() const {
  const ncclComm_t comm = m_comm.load();
  if (comm == nullptr) {
    throw BackendError("the NCCL communicator of rank " + std::to_string(m_rank) +
                       " was aborted after an earlier error or timeout; no more NCCL ops can run");
  }
  return comm;
}

void Communicator::complete(ncclResult_t result, const std::string& what) {
  if (result == ncclSuccess) {
    return;
  }
  if (result != ncclInProgress) {
    throw BackendError(nccl_error_message(result, get(), "NCCL " + what + " on rank " + std::to_string(m_rank)));
  }
  wait_until([] { return true; }, what);
}

void Communicator::settle(ncclResult_t result, const std::string& what) {
  complete(result, what);
  wait_until([] { return true; }, what);
}

bool Communicator::settled(const std::string& what) {
  if (m_abort_requested.load()) {
    abort();
    throw TimeoutError("NCCL " + what + " on rank " + std::to_string(m_rank) +
                       ": the hang guard is ending the job (--timeout); communicator aborted on the rank's thread");
  }
  const ncclComm_t comm = get();
  ncclResult_t state = ncclSuccess;
  const ncclResult_t query = nccl().CommGetAsyncError(comm, &state);
  if (query != ncclSuccess) {
    state = query;
  }
  if (state == ncclSuccess) {
    return true;
  }
  if (state == ncclInProgress) {
    return false;
  }
  const std::string message = nccl_error_message(state, comm, "NCCL " + what + " on rank " + std::to_string(m_rank));
  abort();
  throw BackendError(message + "; communicator aborted");
}

void Communicator::abort_and_throw_timeout(const std::string& what) {
  abort();
  throw TimeoutError("NCCL " + what + " did not complete within " + seconds_text(m_timeout_s) + " s on rank " +
                     std::to_string(m_rank) + "; communicator aborted");
}

// The deadline bounds the polling of a non-blocking communicator only (see the header).
bool Communicator::finalize() {
  ncclResult_t state = nccl().CommFinalize(m_comm.load());
  const Deadline deadline(m_timeout_s);
  Poller poller;
  while (state == ncclInProgress && !deadline.expired()) {
    poller.pause();
    if (nccl().CommGetAsyncError(m_comm.load(), &state) != ncclSuccess) {
      return false;
    }
  }
  return state == ncclSuccess;
}

}  // namespace ccbench::nccl_detail
