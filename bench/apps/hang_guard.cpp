#include "hang_guard.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <map>
#include <thread>

#include "ccbench/environment.hpp"
#include "ccbench/errors.hpp"
#include "debug_hooks.hpp"

namespace ccbench {
namespace {

// A stopped or dead rank never answers; a live one answers within milliseconds even on a
// loaded machine. Both waits keep the whole exit within --timeout + 10 s.
constexpr double kRollCallWait_s = 2.0;
constexpr double kNoticeWait_s = 2.0;

// What the others wait in, when not in the reporter's op.
std::string elsewhere(const Hang& h, const RollCall& roll) {
  std::map<std::string, std::vector<int>> by_activity;
  for (const auto& a : h.answered) {
    if (a.activity != h.activity && std::find(h.silent.begin(), h.silent.end(), a.rank) == h.silent.end()) {
      by_activity[a.activity].push_back(a.rank);
    }
  }
  std::string text;
  for (const auto& [activity, ranks] : by_activity) {
    text += fmt::format("; {} in {}", roll.describe(ranks), activity);
  }
  return text;
}

}  // namespace

std::string to_text(const Hang& hang) {
  nlohmann::json answered = nlohmann::json::array();
  for (const auto& a : hang.answered) {
    answered.push_back({{"rank", a.rank}, {"activity", a.activity}, {"resumed_s_ago", a.resumed_s_ago}});
  }
  return nlohmann::json{
      {"kind", "hang"},        {"reporter", hang.reporter}, {"activity", hang.activity}, {"waited_s", hang.waited_s},
      {"silent", hang.silent}, {"resumed", hang.resumed},   {"answered", answered}}
      .dump();
}

std::string ending_text(int reporter) { return nlohmann::json{{"kind", "ending"}, {"reporter", reporter}}.dump(); }

std::optional<Hang> hang_from_text(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  const auto kind = j.at("kind").get<std::string>();
  if (kind == "ending") {
    (void)j.at("reporter").get<int>();
    return std::nullopt;
  }
  if (kind != "hang") {
    throw std::runtime_error("a notice of kind " + kind);
  }
  Hang h;
  h.reporter = j.at("reporter").get<int>();
  h.activity = j.at("activity").get<std::string>();
  h.waited_s = j.at("waited_s").get<double>();
  h.silent = j.at("silent").get<std::vector<int>>();
  h.resumed = j.at("resumed").get<std::vector<int>>();
  for (const auto& a : j.at("answered")) {
    h.answered.push_back(
        {a.at("rank").get<int>(), a.at("activity").get<std::string>(), a.at("resumed_s_ago").get<double>()});
  }
  return h;
}

std::string HangGuard::absent(const Hang& h) const {
  if (h.silent.empty()) {
    return "every rank answered the roll call, so none is missing: a deadlock or a hang inside the library";
  }
  std::vector<int> quiet;
  std::set_difference(h.silent.begin(), h.silent.end(), h.resumed.begin(), h.resumed.end(), std::back_inserter(quiet));
  std::string text;
  if (!quiet.empty()) {
    text = fmt::format("did not answer the roll call within {:g} s: {}", kRollCallWait_s, m_roll.describe(quiet));
  }
  if (!h.resumed.empty()) {
    text += fmt::format("{}{} had been stopped (SIGSTOP or a debugger) until the job was being ended",
                        text.empty() ? "" : "; ", m_roll.describe(h.resumed));
  }
  return text;
}

HangGuard::HangGuard(Group& world, std::string program, double timeout_s, EndJob end_job, LetGo let_go)
    : m_rank(world.rank()),
      m_program(std::move(program)),
      m_end_job(end_job ? std::move(end_job) : EndJob([](int code) { MpiContext::abort(code); })),
      m_let_go(std::move(let_go)),
      m_roll(world.rank(), local_hostname()),
      m_watchdog(timeout_s + debug::extra_timeout_s(world.rank()),
                 [this](const std::string& a, double w) { expired(a, w); }) {
  begin("set-up: exchanging the roll-call key and addresses");
  m_roll.join(world);
  // On the writer, another rank is about to end the job: record its hang, if any, then let go of the
  // result path; the notice is answered (and that rank ends the job) only once this returns.
  m_roll.on_notice([this](const std::string& payload) {
    try {
      if (const auto hang = hang_from_text(payload)) {
        record(*hang);
      }
    } catch (const std::exception& e) {  // a foreign or garbled notice: say so, never crash
      fmt::print(stderr, "{}: warning: ignored a malformed hang notice: {}\n", m_program, e.what());
      return;
    }
    if (m_rank == 0 && m_let_go) {
      m_let_go();
    }
  });
  idle("set-up");
}

HangGuard::~HangGuard() {
  const auto ignored = m_roll.ignored();
  if (ignored.rejected + ignored.replayed > 0) {
    fmt::print(stderr,
               "{}: warning: rank {} ignored {} roll-call datagrams that were not this job's (no or a wrong MAC, "
               "malformed) and {} sent again (a SEQ already seen)\n",
               m_program, m_rank, ignored.rejected, ignored.replayed);
  }
}

void HangGuard::begin(std::string activity) {
  m_roll.set_activity(activity);
  m_watchdog.begin(std::move(activity));
}

void HangGuard::idle(std::string state) {
  m_watchdog.idle();
  m_roll.set_activity(std::move(state));
}

void HangGuard::set_recorder(Recorder recorder) {
  const std::lock_guard lock(m_mutex);
  m_recorder = std::move(recorder);
}

void HangGuard::set_abandon(std::function<void()> abandon) {
  const std::lock_guard lock(m_mutex);
  m_abandon = std::move(abandon);
}

// Under the mutex set_abandon takes: the session cannot let its backend go while this asks it to stop, and
// Backend::abandon returns at once (it only asks the rank's thread: see Backend::abandon), so no thread is left
// behind to outlive the backend.
void HangGuard::abandon_backend() {
  const std::lock_guard lock(m_mutex);
  if (m_abandon) {
    m_abandon();
  }
}

void HangGuard::record(const Hang& hang) {
  if (const double delay = debug::record_delay_s(); delay > 0.0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  }
  const std::lock_guard lock(m_mutex);
  if (m_recorder) {
    m_recorder(hang);
  }
}

// On the watchdog's thread; never returns.
void HangGuard::expired(const std::string& activity, double waited_s) {
  Hang h;
  h.reporter = m_rank;
  h.activity = activity;
  h.waited_s = waited_s;
  if (m_roll.has_peers()) {
    // A rank continued since the hang began was stopped through it.
    auto outcome = m_roll.call(kRollCallWait_s, waited_s + kRollCallWait_s);
    h.silent = std::move(outcome.silent);
    h.resumed = std::move(outcome.resumed);
    h.answered = std::move(outcome.answered);
  }
  fmt::print(stderr, "{}: error: timeout: {} made no progress for {:.1f} s on {}; {}{}; ending the job\n", m_program,
             activity, waited_s, m_roll.describe({m_rank}),
             m_roll.has_peers() ? absent(h) : std::string{"the ranks had not yet exchanged roll-call addresses"},
             elsewhere(h, m_roll));
  std::fflush(stderr);
  // The writer records the hang (and lets go of the result path) before anyone's MPI_Abort can end it.
  bool told = false;
  if (m_rank == 0) {
    record(h);
  } else if (m_roll.has_peers()) {
    told = m_roll.notify(0, to_text(h), kNoticeWait_s);
  }
  abandon_backend();  // NCCL: the rank's thread aborts its communicator at its next poll, as nccl-tests' -T does
  finish(kExitTimeout, told);
}

void HangGuard::end_job(int exit_code) { finish(exit_code, false); }

void HangGuard::finish(int exit_code, bool writer_told) {
  if (m_rank == 0) {
    if (m_let_go) {
      m_let_go();
    }
  } else if (!writer_told && m_roll.has_peers()) {
    (void)m_roll.notify(0, ending_text(m_rank), kNoticeWait_s);
  }
  // A writer that did not answer in time (stopped, or slow to write) is ended by the launcher's SIGTERM,
  // which removes its lock file too (OutputClaim).
  m_end_job(exit_code);
  std::_Exit(exit_code);  // an end_job that returned
}

}  // namespace ccbench
