#include "roofline/store/db.hpp"

#include <sqlite3.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"

namespace roofline::store {

namespace {
[[noreturn]] void store_error(const std::string& what, const std::string& hint) {
  throw Error(ErrorKind::Store, what, hint);
}
}  // namespace

// ---------------------------------------------------------------- Statement

Statement::Statement(Db& db, const std::string& sql) : db_(&db), sql_(sql) {
  int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "preparing: " + sql.substr(0, 80));
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

#define ROOFLINE_BIND(call)                                  \
  do {                                                       \
    int rc_ = (call);                                        \
    if (rc_ != SQLITE_OK) db_->fail(rc_, "binding parameter"); \
  } while (0)

Statement& Statement::bind(int i, std::int64_t v) {
  ROOFLINE_BIND(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}
Statement& Statement::bind(int i, double v) {
  ROOFLINE_BIND(sqlite3_bind_double(stmt_, i, v));
  return *this;
}
Statement& Statement::bind(int i, const std::string& v) {
  ROOFLINE_BIND(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}
Statement& Statement::bind(int i, std::nullopt_t) {
  ROOFLINE_BIND(sqlite3_bind_null(stmt_, i));
  return *this;
}
Statement& Statement::bind_blob(int i, const void* data, size_t n) {
  ROOFLINE_BIND(sqlite3_bind_blob64(stmt_, i, data, n, SQLITE_TRANSIENT));
  return *this;
}
Statement& Statement::bind_column(int i, const Statement& from, int col) {
  ROOFLINE_BIND(sqlite3_bind_value(stmt_, i, sqlite3_column_value(from.stmt_, col)));
  return *this;
}

#undef ROOFLINE_BIND

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, "running: " + sql_.substr(0, 80));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::int64_t Statement::i64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::f64(int col) const { return sqlite3_column_double(stmt_, col); }
std::string Statement::text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}
std::optional<double> Statement::opt_f64(int col) const {
  if (is_null(col)) return std::nullopt;
  return f64(col);
}
std::optional<std::string> Statement::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

// ---------------------------------------------------------------------- Db

std::string Db::resolve_path(const std::string& cli_value) {
  if (!cli_value.empty()) return cli_value;
  if (auto path = env::get(env::Var::Db)) return *path;
  return "roofline.db";
}

Db::Db(const std::string& path, Mode mode, int target_version) : path_(path), mode_(mode) {
  if (mode == Mode::ReadOnly && ::access(path.c_str(), F_OK) != 0)
    store_error(fmt::format("there is no results store at '{}'", path),
                "check the path (--db PATH or the ROOFLINE_DB variable); the commands that measure (analyze, "
                "device, ceilings, sweep, bench, profile) create it");
  int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    if (mode == Mode::ReadOnly)
      store_error(fmt::format("cannot open the results database '{}': {}", path, msg),
                  "check the path; --db PATH or the ROOFLINE_DB variable choose another file");
    store_error(fmt::format("cannot open the results database '{}' for writing: {}", path, msg),
                "choose a writable location with --db PATH or the ROOFLINE_DB variable");
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, 10000);
  try {
    initialise(mode, target_version);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

void Db::initialise(Mode mode, int target_version) {
  const std::string& path = path_;
  // The first read of the header tells a database from anything else. A file
  // that is not a database is left untouched.
  int version = schema_version();
  if (version > latest_schema_version()) {
    store_error(fmt::format("the results database '{}' has schema version {}, newer than this roofline "
                            "understands (version {})",
                            path, version, latest_schema_version()),
                "use the roofline that wrote it (or a newer one), or choose another file with --db PATH; "
                "the file was not changed");
  }
  exec("PRAGMA foreign_keys=ON");
  if (mode == Mode::ReadOnly) {
    // A reader changes nothing, so it cannot migrate: it says what the file is.
    if (version == 0)
      store_error(fmt::format("'{}' is not a roofline results store (an SQLite file without roofline's tables)", path),
                  "give the store a roofline command wrote, with --db PATH or the ROOFLINE_DB variable");
    if (version < latest_schema_version())
      store_error(fmt::format("the results store '{}' has schema version {}, older than this roofline's ({}), and "
                              "this command only reads",
                              path, version, latest_schema_version()),
                  "run a command that stores (e.g. `roofline device`) on it once to upgrade it; the data is kept");
    return;
  }
  // WAL lets readers work while one writer commits; NORMAL sync is durable
  // against process crashes (what the tests kill) and fast.
  {
    Statement wal(*this, "PRAGMA journal_mode=WAL");
    wal.step();
  }
  exec("PRAGMA synchronous=NORMAL");
  migrate(target_version < 0 ? latest_schema_version() : target_version);
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

void Db::fail(int rc, const std::string& what) const {
  std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB)
    store_error(fmt::format("'{}' is not a roofline results database ({})", path_, msg),
                "move the file aside (it was not changed) and run again, or choose another file with --db PATH");
  // Damage inside a store is found only when a statement reaches the damaged
  // page, so what this run committed before that may be in the file.
  if (primary == SQLITE_CORRUPT)
    store_error(fmt::format("the results database '{}' is damaged ({}, while {}); what this run stored before "
                            "the damage was found may be in it",
                            path_, msg, what),
                "move the file aside and run again, or choose another file with --db PATH; `sqlite3 FILE .recover` "
                "saves what is still readable");
  if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || primary == SQLITE_PERM ||
      primary == SQLITE_IOERR)
    store_error(fmt::format("cannot write the results database '{}': {} ({})", path_, msg, what),
                "make the file and its folder writable, or choose another file with --db PATH");
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    store_error(fmt::format("the results database '{}' stayed locked by another process: {}", path_, msg),
                "wait for the other roofline to finish, or use another file with --db PATH");
  if (primary == SQLITE_FULL)
    store_error(fmt::format("the disk holding '{}' is full", path_), "free space or choose another --db PATH");
  store_error(fmt::format("results database error in '{}' while {}: {}", path_, what, msg), "");
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : "";
    sqlite3_free(err);
    fail(rc, "executing: " + sql.substr(0, 80) + (msg.empty() ? "" : " (" + msg + ")"));
  }
}

std::int64_t Db::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

int Db::schema_version() {
  Statement st(*this, "PRAGMA user_version");
  st.step();
  return static_cast<int>(st.i64(0));
}

void Db::migrate(int target) {
  int current = schema_version();
  for (const auto& m : migrations()) {
    if (m.version <= current || m.version > target) continue;
    Transaction tx(*this);
    // Another process may have migrated while we waited for the lock.
    if (schema_version() >= m.version) continue;
    exec(m.sql);
    exec(fmt::format("PRAGMA user_version={}", m.version));
    tx.commit();
  }
}

// -------------------------------------------------------------- Transaction

Transaction::Transaction(Db& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

std::string utc_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

}  // namespace roofline::store
