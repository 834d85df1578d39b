// roofline import: another store's runs into this one (import.hpp). Generic
// over the schema: the tables and the columns that hold another table's id
// come from SQLite itself (sqlite_master, PRAGMA foreign_key_list), so a new
// table is imported without a change here.
#include "roofline/store/import.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "roofline/core/error.hpp"

namespace roofline::store {

namespace {

// A raw statement on one connection, finalized on scope exit; errors name the SQL.
class Raw {
 public:
  Raw(Db& db, const std::string& sql) : db_(db) {
    if (int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &st_, nullptr); rc != SQLITE_OK)
      db.fail(rc, "prepare: " + sql);
  }
  ~Raw() { sqlite3_finalize(st_); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) db_.fail(rc, "step");
    return false;
  }
  sqlite3_stmt* get() const { return st_; }

 private:
  Db& db_;
  sqlite3_stmt* st_ = nullptr;
};

struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::map<std::string, std::string> refs;  // column -> the table whose id it holds
};

std::vector<Table> tables_of(Db& db) {
  std::vector<Table> out;
  Raw names(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (names.step()) out.push_back({reinterpret_cast<const char*>(sqlite3_column_text(names.get(), 0)), {}, {}});
  for (Table& t : out) {
    Raw cols(db, fmt::format("PRAGMA table_info(\"{}\")", t.name));
    while (cols.step()) t.columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(cols.get(), 1)));
    Raw fks(db, fmt::format("PRAGMA foreign_key_list(\"{}\")", t.name));
    while (fks.step())
      t.refs[reinterpret_cast<const char*>(sqlite3_column_text(fks.get(), 3))] =
          reinterpret_cast<const char*>(sqlite3_column_text(fks.get(), 2));
  }
  // Referenced tables first.
  std::vector<Table> ordered;
  std::set<std::string> placed;
  while (!out.empty()) {
    const auto ready = std::find_if(out.begin(), out.end(), [&](const Table& t) {
      for (const auto& [c, ref] : t.refs)
        if (ref != t.name && !placed.count(ref)) return false;
      return true;
    });
    if (ready == out.end())
      throw Error(ErrorKind::Internal, "the store's tables reference each other in a cycle", "report it");
    placed.insert(ready->name);
    ordered.push_back(std::move(*ready));
    out.erase(ready);
  }
  return ordered;
}

std::int64_t max_id(Db& db, const std::string& table) {
  Raw st(db, fmt::format("SELECT COALESCE(MAX(id), 0) FROM \"{}\"", table));
  st.step();
  return sqlite3_column_int64(st.get(), 0);
}

}  // namespace

ImportResult import_store(Db& into, const std::string& from) {
  std::error_code ec;
  if (std::filesystem::equivalent(from, into.path(), ec))
    throw Error(ErrorKind::Store, fmt::format("'{}' is this store itself", from),
                "import another machine's store file (--db names the one imported into)");
  std::unique_ptr<Db> src;
  try {
    src = std::make_unique<Db>(from, Db::Mode::ReadOnly);  // never written; refuses what it cannot read
  } catch (const Error& e) {
    // Said of the file to import, not of this store (which is unchanged).
    const bool older = std::string(e.what()).find("older than this roofline") != std::string::npos;
    throw Error(e.kind(), fmt::format("cannot import: {}", e.what()),
                older ? fmt::format("{} was not changed; upgrade a copy of the file first (cp FILE COPY; roofline "
                                    "--db COPY device), then import the copy",
                                    into.path())
                      : fmt::format("{} was not changed; name another machine's roofline store (its roofline.db)",
                                    into.path()));
  }
  const std::vector<Table> tables = tables_of(*src);
  for (const Table& t : tables_of(into)) {  // same schema version, so the same tables; check anyway
    const auto it = std::find_if(tables.begin(), tables.end(), [&](const Table& s) { return s.name == t.name; });
    if (it == tables.end() || it->columns != t.columns)
      throw Error(ErrorKind::Store, fmt::format("'{}' and this store differ in table {}", from, t.name),
                  "import a store written by this roofline version");
  }
  ImportResult out;
  Transaction tx(into);
  std::map<std::string, std::int64_t> offset;
  for (const Table& t : tables) offset[t.name] = max_id(into, t.name);
  std::map<std::string, std::set<std::int64_t>> skipped;  // per table: source ids not imported
  {
    // A run already here: same start, host and command line.
    Raw runs(*src, "SELECT id, started_at, COALESCE(host, ''), argv FROM runs");
    Raw here(into, "SELECT 1 FROM runs WHERE started_at = ? AND COALESCE(host, '') = ? AND argv = ?");
    while (runs.step()) {
      for (int i = 1; i <= 3; ++i) sqlite3_bind_value(here.get(), i, sqlite3_column_value(runs.get(), i));
      if (here.step()) skipped["runs"].insert(sqlite3_column_int64(runs.get(), 0));
      sqlite3_reset(here.get());
    }
    out.runs_skipped = static_cast<std::int64_t>(skipped["runs"].size());
  }
  for (const Table& t : tables) {
    std::string cols, marks;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      cols += (i ? ", \"" : "\"") + t.columns[i] + "\"";
      marks += i ? ", ?" : "?";
    }
    const int id_col = static_cast<int>(std::find(t.columns.begin(), t.columns.end(), "id") - t.columns.begin());
    if (id_col == static_cast<int>(t.columns.size()))
      throw Error(ErrorKind::Internal, fmt::format("table {} has no id column", t.name), "report it");
    Raw sel(*src, fmt::format("SELECT {} FROM \"{}\" ORDER BY id", cols, t.name));
    Raw ins(into, fmt::format("INSERT INTO \"{}\" ({}) VALUES ({})", t.name, cols, marks));
    std::int64_t added = 0;
    while (sel.step()) {
      sqlite3_stmt* row = sel.get();
      const std::int64_t id = sqlite3_column_int64(row, id_col);
      bool skip = skipped[t.name].count(id) > 0;
      for (size_t i = 0; i < t.columns.size() && !skip; ++i) {
        const int c = static_cast<int>(i);
        const auto ref = t.refs.find(t.columns[i]);
        if (c == id_col) {
          sqlite3_bind_int64(ins.get(), c + 1, id + offset[t.name]);
        } else if (ref != t.refs.end() && sqlite3_column_type(row, c) != SQLITE_NULL) {
          const std::int64_t v = sqlite3_column_int64(row, c);
          skip = skipped[ref->second].count(v) > 0;  // what it belongs to stayed out
          sqlite3_bind_int64(ins.get(), c + 1, v + offset[ref->second]);
        } else {
          sqlite3_bind_value(ins.get(), c + 1, sqlite3_column_value(row, c));
        }
      }
      if (skip) {
        skipped[t.name].insert(id);
      } else {
        ins.step();
        ++added;
      }
      sqlite3_reset(ins.get());
      sqlite3_clear_bindings(ins.get());
    }
    out.rows[t.name] = added;
  }
  {
    Raw devs(into, "SELECT DISTINCT name, kind FROM devices WHERE id > ? ORDER BY name");
    sqlite3_bind_int64(devs.get(), 1, offset["devices"]);
    while (devs.step())
      out.devices.push_back(fmt::format("{} ({})", reinterpret_cast<const char*>(sqlite3_column_text(devs.get(), 0)),
                                        reinterpret_cast<const char*>(sqlite3_column_text(devs.get(), 1))));
  }
  tx.commit();
  return out;
}

}  // namespace roofline::store
