#pragma once
// --timeout over the whole run (DESIGN §7): communicator set-up, every op, and the gathering of
// results. When nothing moves for that long, the rank calls the roll (RollCall) to learn which
// ranks did not arrive, says so in one line, has the writer record the hang in the result file,
// and ends the job with exit code 3.
//
// Whichever rank ends the job (a timeout, a fatal error), the writer (world rank 0) lets go of its hold
// on the result path first: a rank that ends it tells the writer and waits until it has, since ending
// the job kills the writer, which would otherwise leave its lock file beside the result.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/mpi/mpi_group.hpp"
#include "ccbench/roll_call.hpp"
#include "ccbench/watchdog.hpp"

namespace ccbench {

/// What a rank that gave up knows.
struct Hang {
  int reporter = -1;
  std::string activity;  // what the reporter waited in
  double waited_s = 0;
  std::vector<int> silent;                 // did not arrive: RollCall::Outcome::silent
  std::vector<int> resumed;                // of those, the ones stopped until the job ended
  std::vector<RollCall::Answer> answered;  // and what the others were doing
};

/// The notices a rank that ends the job sends the writer first: the hang it met, or only that it ends it.
std::string to_text(const Hang& hang);
std::string ending_text(int reporter);
/// The hang of a notice; unset for an ending one. Throws on malformed input.
std::optional<Hang> hang_from_text(const std::string& text);

class HangGuard {
 public:
  using Recorder = std::function<void(const Hang&)>;
  /// Ends the whole job with an exit code (MPI_Abort under mpirun; the process alone in the standalone pair).
  using EndJob = std::function<void(int exit_code)>;
  /// What the writer lets go of before the job is ended (its hold on the result path); called once at most
  /// from each of two threads, so it must be safe to call twice and from any thread.
  using LetGo = std::function<void()>;

  /// Collective over `world`: starts the watchdog, shares the roll-call key and exchanges the
  /// roll-call addresses (RollCall::join).
  /// `end_job` (default: MpiContext::abort) is called once a hang is reported; `let_go` (world rank 0)
  /// before any rank ends the job.
  HangGuard(Group& world, std::string program, double timeout_s, EndJob end_job = {}, LetGo let_go = {});
  HangGuard(const HangGuard&) = delete;
  HangGuard& operator=(const HangGuard&) = delete;
  HangGuard(HangGuard&&) = delete;
  HangGuard& operator=(HangGuard&&) = delete;
  /// Says on stderr how many roll-call datagrams this rank ignored, when it ignored any.
  ~HangGuard();

  /// Ends the whole job from this rank (a fatal error): world rank 0 lets go of the result path first; another
  /// rank tells world rank 0 and waits (a few seconds at most) until it has. Never returns.
  [[noreturn]] void end_job(int exit_code);

  /// Watches `activity` (and answers the roll call with it) until the next begin() or idle().
  void begin(std::string activity);
  void idle(std::string state);
  /// For the runner, which kicks it after every sample.
  [[nodiscard]] Watchdog& watchdog() { return m_watchdog; }
  /// Who did not arrive, in words: "did not answer the roll call within 2 s: rank 3 (node1)".
  [[nodiscard]] std::string absent(const Hang& hang) const;
  /// On world rank 0: records a hang (this rank's or one another rank reports) and returns once
  /// it is written. Pass an empty function to stop recording.
  void set_recorder(Recorder recorder);
  /// What asks the backend's library to stop when the job is ended for a hang (Backend::abandon, which returns
  /// at once); run on the watchdog's thread under the guard's mutex. Pass an empty function before the backend
  /// goes (that waits for a call in progress).
  void set_abandon(std::function<void()> abandon);

 private:
  void expired(const std::string& activity, double waited_s);
  void record(const Hang& hang);
  void abandon_backend();
  /// Ends the job; `writer_told`: world rank 0 has let go already (this rank told it of its hang).
  [[noreturn]] void finish(int exit_code, bool writer_told);

  int m_rank;
  std::string m_program;
  EndJob m_end_job;
  LetGo m_let_go;
  RollCall m_roll;
  std::mutex m_mutex;  // m_recorder, m_abandon
  Recorder m_recorder;
  std::function<void()> m_abandon;
  Watchdog m_watchdog;  // last: its thread may call expired() as soon as it exists
};

}  // namespace ccbench
