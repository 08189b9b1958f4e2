// The JSON file nccl-tests writes with -J (2.17.3+; JSON_FILE_VERSION 1 to 3 in src/util.cu) read into
// ImportedTest. Its writer's habits: booleans as the strings "true"/"false", NaN as the string "nan", root as a
// string padded to 6, nwrong a double or null (-c 0), "cpu_time" for "time" with -C 1, per-iteration times
// (-I 1, 2.19.2+) in "out_of_place_per_iter"/"in_place_per_iter" with "per_process_max_times_us" when there
// are several processes, and only the first GPU of each process in config.devices.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "ccbench/registration.hpp"
#include "ccbench/report/input.hpp"
#include "import_logs.hpp"

namespace ccbench::report::detail {

namespace {

using Json = nlohmann::json;

/// A number as -J writes it: a JSON number, or the string "nan" (nullopt), or a number in a string.
std::optional<double> json_number(const Json& j) {
  if (j.is_number()) {
    return j.get<double>();
  }
  if (j.is_string()) {
    const auto v = number(j.get<std::string>());
    return v && std::isfinite(*v) ? v : std::nullopt;
  }
  return std::nullopt;
}

/// "2026-01-01 00:00:00" (the run host's local time) as "2026-01-01T00:00:00Z"; "" for anything else.
std::string utc_of(const Json& j) {
  if (!j.is_string()) {
    return "";
  }
  auto s = j.get<std::string>();
  if (s.size() != 19 || s[10] != ' ') {
    return "";
  }
  s[10] = 'T';
  return s + "Z";
}

class JsonReader {
 public:
  explicit JsonReader(const std::string& file) : m_file(file) {}

  ImportedTest read(std::string_view text) {
    Json j;
    try {
      j = Json::parse(text);
    } catch (const Json::parse_error& e) {
      throw InputError(m_file, "", fmt::format("truncated or not JSON: {}", e.what()));
    }
    if (!j.is_object() || !j.contains("results") || !j.contains("config") || !j.contains("args")) {
      throw InputError(m_file, "", "not a nccl-tests -J file (no args, config and results)");
    }
    ImportedTest t;
    t.file = m_file;
    t.tool = "nccl-tests";
    t.format = "json";
    t.version = fmt::format("JSON file version {}", j.value("version", 0));
    const auto& args = at(j, "args", "/args");
    for (const auto& a : args) {
      t.argv.push_back(a.is_string() ? a.get<std::string>() : a.dump());
    }
    if (t.argv.empty()) {
      throw InputError(m_file, "/args", "empty: the test's program is not named");
    }
    std::string program = t.argv.front().substr(t.argv.front().find_last_of('/') + 1);
    if (program.size() > 5 && program.substr(program.size() - 5) == "_perf") {
      program.resize(program.size() - 5);
    }
    const auto coll = parse_collective(program);
    if (!coll || is_rdma(*coll) || is_copy(*coll)) {
      throw InputError(m_file, "/args/0",
                       fmt::format("nccl-tests' {} has no ccbench bench to be read as", t.argv.front()));
    }
    t.coll = *coll;
    if (const auto code = small_int(json_number(j.value("nccl_version", Json()))); code && *code >= 20900) {
      t.nccl_version = nccl_version_text(*code);
    }
    t.started_utc = utc_of(j.value("start_time", Json()));
    t.ended_utc = utc_of(j.value("end_time", Json()));
    if (!t.started_utc.empty()) {
      t.notes.push_back(fmt::format("{}: start_time is the run host's local time (nccl-tests writes no zone)", m_file));
    }
    const auto& config = at(j, "config", "/config");
    const int per_process = small_int(json_number(config.value("ngpus", Json(1)))).value_or(1) *
                            small_int(json_number(config.value("nthreads", Json(1)))).value_or(1);
    if (per_process < 1 || per_process > 1024) {
      throw InputError(m_file, "/config/ngpus",
                       fmt::format("{} GPUs a process: not what nccl-tests runs", per_process));
    }
    for (const auto& d : config.value("devices", Json::array())) {
      // one entry per process: its first GPU; the others of a process follow it in rank order
      for (int g = 0; g < per_process; ++g) {
        t.devices.push_back({static_cast<int>(t.devices.size()), d.value("hostname", std::string()),
                             d.value("device_info", std::string()), d.value("device_hex", std::string())});
      }
    }
    t.ranks = static_cast<int>(t.devices.size());
    if (t.ranks < 1) {
      throw InputError(m_file, "/config/devices", "no device: the ranks are not known");
    }
    if (per_process > 1) {
      t.notes.push_back(
          fmt::format("{}: {} GPUs per process; -J names only the first, the others are taken to be "
                      "its neighbours on the same host",
                      m_file, per_process));
    }
    const auto iters = whole(json_number(config.value("iterations", Json(0)))).value_or(0);
    const auto& results = at(j, "results", "/results");
    if (!results.is_array() || results.empty()) {
      throw InputError(m_file, "/results", "no result: the run ended before its first size");
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      row(t, results[i], fmt::format("/results/{}", i), iters);
    }
    if (!j.contains("average_bus_bandwidth")) {
      t.notes.push_back(fmt::format("{}: no average_bus_bandwidth: the run ended early", m_file));
    }
    return t;
  }

 private:
  const Json& at(const Json& j, const char* key, const std::string& pointer) const {
    if (!j.is_object() || !j.contains(key)) {
      throw InputError(m_file, pointer, "missing");
    }
    return j.at(key);
  }

  void row(ImportedTest& t, const Json& r, const std::string& pointer, std::uint64_t iters) {
    ImportedRow base;
    const auto size = whole(json_number(at(r, "size", pointer + "/size")));
    const auto count = whole(json_number(at(r, "count", pointer + "/count")));
    if (!size || !count) {
      throw InputError(m_file, pointer, "size and count must be whole numbers");
    }
    base.size_bytes = *size;
    base.count = *count;
    const auto type = r.value("type", std::string());
    const auto dtype = parse_dtype(type);
    if (!dtype) {
      throw InputError(m_file, pointer + "/type", fmt::format("unknown type '{}'", type));
    }
    base.dtype = *dtype;
    if (const auto op = r.value("redop", std::string("none")); op != "none") {
      const auto parsed = parse_reduce_op(op);
      if (!parsed) {
        throw InputError(m_file, pointer + "/redop", fmt::format("unknown redop '{}'", op));
      }
      base.op = *parsed;
    }
    base.root = small_int(json_number(r.value("root", Json("-1")))).value_or(-1);
    base.iterations = whole(json_number(r.value("actual_iterations", Json(iters)))).value_or(0);
    if (info(t.coll).algbw_bytes != Span::Plan &&
        algbw_bytes(info(t.coll), base.count, size_of(base.dtype), t.ranks) != base.size_bytes) {
      throw InputError(m_file, pointer,
                       fmt::format("size {} is not what {} elements of {} on {} ranks make", base.size_bytes,
                                   base.count, type, t.ranks));
    }
    for (const bool in_place : {false, true}) {
      const std::string key = in_place ? "in_place" : "out_of_place";
      if (!r.contains(key) || r.at(key).is_null()) {
        continue;
      }
      const auto& side = r.at(key);
      ImportedRow out = base;
      out.in_place = in_place;
      if (side.contains("cpu_time")) {
        throw InputError(m_file, fmt::format("{}/{}", pointer, key),
                         "cpu_time (-C 1): a host clock's time, not the GPU's; "
                         "ccbench compares GPU times only");
      }
      const std::string where = fmt::format("{}/{}", pointer, key);
      if (const auto time = json_number(side.value("time", Json())); time) {  // "nan" or absent: N/A
        if (!(*time > 0)) {
          throw InputError(m_file, where + "/time",
                           fmt::format("time {:g} is not a positive number of microseconds", *time));
        }
        out.time_s = *time * 1e-6;
      }
      if (const auto wrong = json_number(side.value("nwrong", Json())); wrong) {  // "N/A" or absent: not checked
        out.wrong = whole(wrong);
        if (!out.wrong) {
          throw InputError(m_file, where + "/nwrong", fmt::format("nwrong {:g} is not a count", *wrong));
        }
      }
      if (const auto it = r.find(key + "_per_iter"); it != r.end() && it->is_object()) {
        per_iter(out, *it, fmt::format("{}/{}_per_iter", pointer, key), t.ranks);
      }
      t.rows.push_back(std::move(out));
    }
  }

  void per_iter(ImportedRow& out, const Json& p, const std::string& pointer, int ranks) const {
    const auto skipped = json_number(p.value("skipped_iterations", Json(0)));
    const auto whole_skip = whole(skipped);
    if (skipped && !whole_skip) {
      throw InputError(m_file, pointer + "/skipped_iterations",
                       fmt::format("skipped_iterations {:g} is not a count", *skipped));
    }
    const auto skip = static_cast<std::size_t>(whole_skip.value_or(0));
    const auto seconds = [&](const Json& list, const std::string& where) {
      std::vector<double> s;
      if (!list.is_array()) {
        throw InputError(m_file, where, "expected a list of times");
      }
      for (std::size_t i = skip; i < list.size(); ++i) {
        const auto v = json_number(list[i]);
        if (!v || *v <= 0) {
          throw InputError(m_file, fmt::format("{}/{}", where, i), "expected a positive time in microseconds");
        }
        s.push_back(*v * 1e-6);
      }
      return s;
    };
    out.iter_times_s = seconds(p.value("times_us", Json::array()), pointer + "/times_us");
    if (const auto it = p.find("per_process_max_times_us"); it != p.end()) {
      if (!it->is_array() || static_cast<int>(it->size()) != ranks) {
        // several GPUs per process: a process is not a rank, and the per-rank view would misname them
        return;
      }
      for (std::size_t r = 0; r < it->size(); ++r) {
        out.per_process_s.push_back(seconds((*it)[r], fmt::format("{}/per_process_max_times_us/{}", pointer, r)));
        if (out.per_process_s.back().size() != out.iter_times_s.size()) {
          throw InputError(m_file, fmt::format("{}/per_process_max_times_us/{}", pointer, r),
                           "not as many times as times_us");
        }
      }
    }
  }

  const std::string& m_file;
};

}  // namespace

std::vector<ImportedTest> parse_nccl_tests_json(std::string_view text, const std::string& file) {
  try {
    return {JsonReader(file).read(text)};
  } catch (const nlohmann::json::exception& e) {  // a key of another type than -J writes (a list for an object)
    throw InputError(file, "", fmt::format("not what nccl-tests -J writes: {}", e.what()));
  }
}

}  // namespace ccbench::report::detail
