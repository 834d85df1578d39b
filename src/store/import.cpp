// roofline import: another store's runs into this one (import.hpp). Generic
// over the schema: the tables and the columns that hold another table's id
// come from SQLite itself (sqlite_master, PRAGMA foreign_key_list), so a new
// table is imported without a change here.
#include "roofline/store/import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "roofline/core/error.hpp"

namespace roofline::store {

namespace {

struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::map<std::string, std::string> refs;  // column -> the table whose id it holds
};

std::vector<Table> tables_of(Db& db) {
  std::vector<Table> out;
  auto names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (names.step()) out.push_back({names.text(0), {}, {}});
  for (Table& t : out) {
    auto cols = db.prepare(fmt::format("PRAGMA table_info(\"{}\")", t.name));
    while (cols.step()) t.columns.push_back(cols.text(1));
    auto fks = db.prepare(fmt::format("PRAGMA foreign_key_list(\"{}\")", t.name));
    while (fks.step()) t.refs[fks.text(3)] = fks.text(2);
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
  auto st = db.prepare(fmt::format("SELECT COALESCE(MAX(id), 0) FROM \"{}\"", table));
  st.step();
  return st.i64(0);
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
    auto runs = src->prepare("SELECT id, started_at, COALESCE(host, ''), argv FROM runs");
    auto here = into.prepare("SELECT 1 FROM runs WHERE started_at = ? AND COALESCE(host, '') = ? AND argv = ?");
    while (runs.step()) {
      for (int i = 1; i <= 3; ++i) here.bind_column(i, runs, i);
      if (here.step()) skipped["runs"].insert(runs.i64(0));
      here.reset();
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
    auto sel = src->prepare(fmt::format("SELECT {} FROM \"{}\" ORDER BY id", cols, t.name));
    auto ins = into.prepare(fmt::format("INSERT INTO \"{}\" ({}) VALUES ({})", t.name, cols, marks));
    std::int64_t added = 0;
    while (sel.step()) {
      const std::int64_t id = sel.i64(id_col);
      bool skip = skipped[t.name].count(id) > 0;
      for (size_t i = 0; i < t.columns.size() && !skip; ++i) {
        const int c = static_cast<int>(i);
        const auto ref = t.refs.find(t.columns[i]);
        if (c == id_col) {
          ins.bind(c + 1, id + offset[t.name]);
        } else if (ref != t.refs.end() && !sel.is_null(c)) {
          const std::int64_t v = sel.i64(c);
          skip = skipped[ref->second].count(v) > 0;  // what it belongs to stayed out
          ins.bind(c + 1, v + offset[ref->second]);
        } else {
          ins.bind_column(c + 1, sel, c);
        }
      }
      if (skip) {
        skipped[t.name].insert(id);
      } else {
        ins.run();
        ++added;
      }
      ins.reset();
    }
    out.rows[t.name] = added;
  }
  {
    auto devs = into.prepare("SELECT DISTINCT name, kind FROM devices WHERE id > ? ORDER BY name");
    devs.bind(1, offset["devices"]);
    while (devs.step()) out.devices.push_back(fmt::format("{} ({})", devs.text(0), devs.text(1)));
  }
  tx.commit();
  return out;
}

}  // namespace roofline::store
