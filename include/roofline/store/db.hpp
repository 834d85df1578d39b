// Thin RAII layer over SQLite: one connection, prepared statements with bound
// parameters only, transactions that roll back unless committed, and a
// versioned schema applied by migrations (see docs/store.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace roofline::store {

class Db;

class Statement {
 public:
  Statement(Db& db, const std::string& sql);
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Statement& bind(int i, std::nullopt_t);
  template <class T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind(i, std::nullopt);
  }
  Statement& bind_blob(int i, const void* data, size_t n);
  // Parameter i takes column `col` of `from`'s current row as it is (any type,
  // NULL included): copying rows between databases (store/import.cpp).
  Statement& bind_column(int i, const Statement& from, int col);

  bool step();   // true while a row is available
  void run();    // steps a statement that returns no rows
  void reset();  // ready to bind and step again

  bool is_null(int col) const;
  std::int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;
  std::optional<double> opt_f64(int col) const;
  std::optional<std::string> opt_text(int col) const;

 private:
  Db* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// The schema's history, oldest first; the last entry is the current version.
const std::vector<Migration>& migrations();
int latest_schema_version();

class Db {
 public:
  enum class Mode { ReadWrite, ReadOnly };

  // The database path: --db if given, else $ROOFLINE_DB, else ./roofline.db.
  static std::string resolve_path(const std::string& cli_value);

  // Opens (creating if needed in ReadWrite mode) and migrates to `target`
  // (the latest version by default). Throws Error(Store) with a hint when the
  // file cannot be opened, is not a database, or comes from a newer roofline.
  explicit Db(const std::string& path, Mode mode = Mode::ReadWrite, int target_version = -1);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql);
  Statement prepare(const std::string& sql) { return Statement(*this, sql); }
  std::int64_t last_insert_id() const;
  int schema_version();
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Throws Error(Store) describing `rc` for the statement or action `what`.
  [[noreturn]] void fail(int rc, const std::string& what) const;

 private:
  void initialise(Mode mode, int target_version);
  void migrate(int target);
  sqlite3* db_ = nullptr;
  std::string path_;
  Mode mode_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so two
// writers queue on busy_timeout instead of failing mid-transaction); ROLLBACK
// in the destructor unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

// Current UTC time as ISO-8601 with milliseconds, e.g. 2026-11-22T10:04:05.123Z.
std::string utc_now();

}  // namespace roofline::store
