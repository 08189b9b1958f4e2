// The history index in SQLite (history_index.hpp): files (path, size, mtime_ns, hash; the run's id, start, label and
// software), series (a row's identity on its hosts), rows (a file's figure in a series), one transaction per update.
#include "ccbench/report/history_index.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <unordered_map>

#include "ccbench/report/input.hpp"
#include "ccbench/report/rows.hpp"

namespace ccbench::report {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS software(id INTEGER PRIMARY KEY, text TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS series(id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, bench TEXT NOT NULL,
  hosts TEXT NOT NULL, row TEXT NOT NULL, size_bytes INTEGER NOT NULL, in_place INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL, problem TEXT NOT NULL, unreadable INTEGER NOT NULL,
  run_id TEXT, started_utc TEXT, label TEXT, software_id INTEGER REFERENCES software(id));
CREATE TABLE IF NOT EXISTS rows(file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  series_id INTEGER NOT NULL REFERENCES series(id), status TEXT NOT NULL, busbw_GBps REAL);
CREATE INDEX IF NOT EXISTS rows_series ON rows(series_id);
CREATE INDEX IF NOT EXISTS rows_file ON rows(file_id);
INSERT OR IGNORE INTO meta(key, value) VALUES('ccbench.history_index', '2');
)sql";

/// A prepared statement, finalized when it goes.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : m_db(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(fmt::format("history index: {}", sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(m_stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&&) = delete;
  Statement& operator=(Statement&&) = delete;

  Statement& text(int i, const std::string& value) {
    sqlite3_bind_text(m_stmt, i, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& integer(int i, std::int64_t value) {
    sqlite3_bind_int64(m_stmt, i, value);
    return *this;
  }
  Statement& real(int i, std::optional<double> value) {
    if (value) {
      sqlite3_bind_double(m_stmt, i, *value);
    } else {
      sqlite3_bind_null(m_stmt, i);
    }
    return *this;
  }
  /// Steps once: true while a row is there.
  bool step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) {
      return true;
    }
    if (rc != SQLITE_DONE) {
      throw std::runtime_error(fmt::format("history index: {}", sqlite3_errmsg(m_db)));
    }
    return false;
  }
  void reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
  }
  [[nodiscard]] std::string column_text(int i) const {
    const auto* p = sqlite3_column_text(m_stmt, i);
    return p == nullptr ? std::string{} : std::string(reinterpret_cast<const char*>(p));
  }
  [[nodiscard]] std::int64_t column_int(int i) const { return sqlite3_column_int64(m_stmt, i); }
  [[nodiscard]] std::optional<double> column_real(int i) const {
    if (sqlite3_column_type(m_stmt, i) == SQLITE_NULL) {
      return std::nullopt;
    }
    return sqlite3_column_double(m_stmt, i);
  }

 private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error == nullptr ? "unknown error" : error;
    sqlite3_free(error);
    throw std::runtime_error(fmt::format("history index: {}", message));
  }
}

/// FNV-1a over the bytes: enough to tell an edit from a touch; not a defence against a forger.
std::string fnv1a(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : bytes) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

struct Stat {
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
};

Stat stat_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto time = fs::last_write_time(path, ec);
  Stat s;
  s.size = ec ? -1 : static_cast<std::int64_t>(size);
  s.mtime_ns = ec ? -1
                  : static_cast<std::int64_t>(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
  return s;
}

/// Every *.json under each root (recursively; a root that is a file is itself), as absolute normal paths.
std::set<std::string> json_files(const std::vector<std::string>& roots, std::vector<std::string>& prefixes) {
  std::set<std::string> found;
  for (const auto& root : roots) {
    std::error_code ec;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(root), ec);
    if (ec || !fs::exists(absolute)) {
      throw InputError(root, "", "no such file or folder");
    }
    if (fs::is_regular_file(absolute)) {
      found.insert(absolute.string());
      prefixes.push_back(absolute.string());
      continue;
    }
    prefixes.push_back(absolute.string() + "/");
    for (fs::recursive_directory_iterator it(absolute, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".json") {
        found.insert(it->path().string());
      }
    }
    if (ec) {
      throw InputError(root, "", fmt::format("cannot be listed: {}", ec.message()));
    }
  }
  return found;
}

/// The ids of a table's unique texts (series keys, software lists), read once, added as they come.
class Ids {
 public:
  Ids(sqlite3* db, const std::string& table) : m_db(db) {
    const std::string column = table == "series" ? "key" : "text";
    Statement all(db, fmt::format("SELECT id, {} FROM {}", column, table).c_str());
    while (all.step()) {
      m_ids.emplace(all.column_text(1), all.column_int(0));
    }
  }
  /// The id of `text`, inserting it with `insert` (one INSERT) when new.
  template <typename Insert>
  std::int64_t get(const std::string& text, const Insert& insert) {
    const auto it = m_ids.find(text);
    if (it != m_ids.end()) {
      return it->second;
    }
    insert();
    return m_ids.emplace(text, sqlite3_last_insert_rowid(m_db)).first->second;
  }

 private:
  sqlite3* m_db;
  std::unordered_map<std::string, std::int64_t> m_ids;
};

std::string sorted_hosts(const CaseResult& result) {
  auto hosts = result.group_hosts;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return fmt::format("{}", fmt::join(hosts, ","));
}

bool under(const std::string& path, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return path == p || path.rfind(p, 0) == 0; });
}

/// Why a file the reader refused is no result: JSON of another schema (a verdict, a log); "" for a result that
/// cannot be read, or a *.json that is no JSON at all (cut short, as a result written without its rename would be).
std::string not_a_result(const std::string& bytes) {
  const auto parsed = nlohmann::json::parse(bytes, nullptr, false);
  if (parsed.is_discarded()) {
    return "";  // a *.json cut short or malformed may be a result that was: unreadable, never passed over
  }
  if (!parsed.is_object() || !parsed.contains("schema") || parsed["schema"] != "ccbench.result") {
    return "not a result (its schema is not ccbench.result)";
  }
  return "";
}

}  // namespace

std::string series_key(const CaseResult& result) {
  return fmt::format("{} @ {}", describe(key_of(result)), sorted_hosts(result));
}

std::string software_of(const ResultDocument& doc) {
  std::set<std::string> things;
  for (const auto& [name, version] : doc.environment.libraries) {
    things.insert(fmt::format("{}={}", name, version));
  }
  if (doc.topology.is_object() && doc.topology.contains("hosts") && doc.topology["hosts"].is_array()) {
    for (const auto& host : doc.topology["hosts"]) {
      if (host.is_object() && host.value("gpu_discovery", nlohmann::json{}).is_string()) {
        things.insert(fmt::format("driver[{}]={}", host.value("hostname", std::string{}),
                                  host["gpu_discovery"].get<std::string>()));
      }
    }
  }
  for (const auto& host : doc.fabric) {
    for (const auto& link : host.links) {
      if (!link.firmware.empty()) {
        things.insert(fmt::format("firmware[{} {}]={}", host.host, link.device, link.firmware));
      }
    }
  }
  return fmt::format("{}", fmt::join(things, "; "));
}

HistoryIndex::HistoryIndex(const std::string& db_path) {
  if (sqlite3_open_v2(db_path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string message = m_db == nullptr ? "out of memory" : sqlite3_errmsg(m_db);
    sqlite3_close(m_db);
    throw UsageError(fmt::format("--db {}: cannot be opened: {}", db_path, message));
  }
  try {
    // WAL: a reader (trend) never waits on a writer (a nightly update); the writer's commit is atomic.
    exec(m_db, "PRAGMA foreign_keys=ON; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    exec(m_db, kSchema);
    Statement version(m_db, "SELECT value FROM meta WHERE key = 'ccbench.history_index'");
    if (!version.step() || version.column_text(0) != "2") {
      throw std::runtime_error("made by another version of ccbench-report: remove it, the results make it again");
    }
  } catch (const std::exception& e) {
    sqlite3_close(m_db);
    throw UsageError(fmt::format("--db {}: not a history index: {}", db_path, e.what()));
  }
}

HistoryIndex::~HistoryIndex() { sqlite3_close(m_db); }

IndexUpdate HistoryIndex::rebuild(const std::vector<std::string>& roots, std::uintmax_t max_bytes) {
  exec(m_db, "BEGIN IMMEDIATE; DELETE FROM rows; DELETE FROM files; DELETE FROM series; DELETE FROM software; COMMIT;");
  return update(roots, max_bytes);
}

IndexUpdate HistoryIndex::update(const std::vector<std::string>& roots, std::uintmax_t max_bytes) {
  std::vector<std::string> prefixes;
  const auto found = json_files(roots, prefixes);
  IndexUpdate u;
  u.files = found.size();

  struct Known {
    std::int64_t id = 0;
    Stat stat;
    std::string hash;
  };
  std::unordered_map<std::string, Known> known;
  {
    Statement all(m_db, "SELECT id, path, size, mtime_ns, hash FROM files");
    while (all.step()) {
      known.emplace(all.column_text(1),
                    Known{all.column_int(0), {all.column_int(2), all.column_int(3)}, all.column_text(4)});
    }
  }
  exec(m_db, "BEGIN IMMEDIATE");
  try {
    Statement drop(m_db, "DELETE FROM files WHERE id = ?1");
    Statement touch(m_db, "UPDATE files SET size = ?2, mtime_ns = ?3 WHERE id = ?1");
    Statement add_file(m_db,
                       "INSERT INTO files(path, size, mtime_ns, hash, problem, unreadable, run_id, started_utc, label, "
                       "software_id) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
    Statement add_row(m_db, "INSERT INTO rows(file_id, series_id, status, busbw_GBps) VALUES(?1,?2,?3,?4)");
    Ids series_ids(m_db, "series");
    Ids software_ids(m_db, "software");
    Statement add_series(m_db,
                         "INSERT INTO series(key, bench, hosts, row, size_bytes, in_place) VALUES(?1,?2,?3,?4,?5,?6)");
    Statement add_software(m_db, "INSERT INTO software(text) VALUES(?1)");
    for (const auto& [path, entry] : known) {
      if (under(path, prefixes) && !found.contains(path)) {
        drop.integer(1, entry.id).step();
        drop.reset();
        ++u.removed;
        u.removed_paths.push_back(path);
      }
    }
    for (const auto& path : found) {
      const Stat now = stat_of(path);
      const auto was = known.find(path);
      if (was != known.end() && was->second.stat.size == now.size && was->second.stat.mtime_ns == now.mtime_ns) {
        ++u.unchanged;
        continue;
      }
      std::string bytes;
      std::string problem;
      try {
        bytes = read_input_file(path, max_bytes, "result file");
      } catch (const InputError& e) {
        problem = e.what();
      }
      const std::string hash = fnv1a(bytes);
      if (was != known.end() && problem.empty() && was->second.hash == hash) {
        touch.integer(1, was->second.id).integer(2, now.size).integer(3, now.mtime_ns).step();
        touch.reset();
        ++u.touched;
        continue;
      }
      if (was != known.end()) {
        drop.integer(1, was->second.id).step();
        drop.reset();
        ++u.changed;
        u.changed_paths.push_back(path);
      } else {
        ++u.added;
      }
      std::optional<LoadedRun> run;
      bool unreadable = !problem.empty();
      if (problem.empty()) {
        try {
          run = read_result_text(bytes, path);
        } catch (const InputError& e) {
          problem = not_a_result(bytes);
          unreadable = problem.empty();
          if (unreadable) {
            problem = e.what();
          }
        }
      }
      add_file.text(1, path).integer(2, now.size).integer(3, now.mtime_ns).text(4, hash);
      add_file.text(5, problem).integer(6, unreadable ? 1 : 0);
      if (run) {
        const std::string software = software_of(run->doc);
        const auto software_id = software_ids.get(software, [&] {
          add_software.text(1, software).step();
          add_software.reset();
        });
        add_file.text(7, run->doc.run.id).text(8, run->doc.run.started_utc).text(9, run->name());
        add_file.integer(10, software_id);
      }
      add_file.step();
      add_file.reset();
      if (!run) {
        continue;
      }
      const auto file_id = sqlite3_last_insert_rowid(m_db);
      for (const auto& r : run->doc.results) {
        const std::string key = series_key(r);
        const auto series_id = series_ids.get(key, [&] {
          add_series.text(1, key).text(2, r.benchmark).text(3, sorted_hosts(r)).text(4, describe(key_of(r)));
          add_series.integer(5, static_cast<std::int64_t>(r.size_bytes)).integer(6, r.spec.in_place ? 1 : 0).step();
          add_series.reset();
        });
        const bool measured = r.status == CaseStatus::Ok && r.time.has_value();
        add_row.integer(1, file_id).integer(2, series_id).text(3, std::string{name(r.status)});
        add_row.real(4, measured ? std::optional<double>{r.busbw_GBps} : std::nullopt).step();
        add_row.reset();
        ++u.rows;
      }
    }
    exec(m_db, "COMMIT");
    std::sort(u.removed_paths.begin(), u.removed_paths.end());
  } catch (...) {
    sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return u;
}

namespace {

constexpr const char* kSelectPoints =
    "SELECT s.key, s.bench, s.hosts, s.row, s.size_bytes, s.in_place, f.run_id, f.started_utc, f.label, f.path, "
    "r.status, r.busbw_GBps, w.text, f.id FROM rows r JOIN files f ON f.id = r.file_id JOIN series s ON s.id = "
    "r.series_id "
    "JOIN software w ON w.id = f.software_id ";

HistoryPoint point_of(const Statement& s) {
  HistoryPoint p;
  p.series = s.column_text(0);
  p.bench = s.column_text(1);
  p.hosts = s.column_text(2);
  p.row = s.column_text(3);
  p.size_bytes = static_cast<std::uint64_t>(s.column_int(4));
  p.in_place = s.column_int(5) != 0;
  p.run_id = s.column_text(6);
  p.started_utc = s.column_text(7);
  p.label = s.column_text(8);
  p.path = s.column_text(9);
  p.status = s.column_text(10);
  p.busbw_GBps = s.column_real(11);
  p.software = s.column_text(12);
  p.file_id = s.column_int(13);
  return p;
}

}  // namespace

std::vector<HistoryPoint> HistoryIndex::points() const {
  std::vector<HistoryPoint> out;
  Statement s(m_db, (std::string{kSelectPoints} + "ORDER BY s.key, f.started_utc, f.path").c_str());
  while (s.step()) {
    out.push_back(point_of(s));
  }
  return out;
}

void HistoryIndex::for_each_point(const std::function<void(HistoryPoint&&)>& take) const {
  // By the series' id (an integer), not its key: the sort of a fleet's 10^6 rows stays cheap.
  Statement s(m_db, (std::string{kSelectPoints} + "ORDER BY r.series_id, f.started_utc, f.path").c_str());
  while (s.step()) {
    take(point_of(s));
  }
}

std::vector<HistoryPoint> HistoryIndex::series(const std::string& key) const {
  std::vector<HistoryPoint> out;
  Statement s(m_db, (std::string{kSelectPoints} + "WHERE s.key = ?1 ORDER BY f.started_utc, f.path").c_str());
  s.text(1, key);
  while (s.step()) {
    out.push_back(point_of(s));
  }
  return out;
}

std::vector<std::string> HistoryIndex::recent_files(const std::vector<std::string>& series, const std::string& software,
                                                    const std::string& before_utc, std::size_t n,
                                                    const std::string& exclude) const {
  exec(m_db, "CREATE TEMP TABLE IF NOT EXISTS wanted(key TEXT PRIMARY KEY); DELETE FROM wanted;");
  {
    Statement add(m_db, "INSERT OR IGNORE INTO wanted(key) VALUES(?1)");
    for (const auto& key : series) {
      add.text(1, key).step();
      add.reset();
    }
  }
  Statement s(m_db,
              "SELECT MIN(f.path), MAX(f.started_utc) AS started FROM files f JOIN rows r ON r.file_id = f.id JOIN "
              "series s ON s.id = r.series_id JOIN software w ON w.id = f.software_id WHERE w.text = ?1 AND "
              "f.started_utc < ?2 AND s.key IN (SELECT key FROM wanted) AND substr(f.path, 1, length(?3)) != ?3 "
              // a run counts once: copies of its file (the same run id, or the same bytes) are one launch
              "GROUP BY COALESCE(NULLIF(f.run_id, ''), f.hash) ORDER BY started DESC, MIN(f.path) LIMIT ?4");
  s.text(1, software).text(2, before_utc).text(3, exclude).integer(4, static_cast<std::int64_t>(n));
  std::vector<std::string> out;
  while (s.step()) {
    out.push_back(s.column_text(0));
  }
  return out;
}

std::vector<IndexedProblem> HistoryIndex::problems() const {
  std::vector<IndexedProblem> out;
  Statement s(m_db, "SELECT path, unreadable, problem FROM files WHERE problem != '' ORDER BY path");
  while (s.step()) {
    out.push_back({s.column_text(0), s.column_int(1) != 0, s.column_text(2)});
  }
  return out;
}

std::size_t HistoryIndex::file_count() const {
  Statement s(m_db, "SELECT COUNT(*) FROM files");
  s.step();
  return static_cast<std::size_t>(s.column_int(0));
}

}  // namespace ccbench::report
