// One way for every command to print results: a Report holds tables; render()
// writes them as aligned text, JSON or CSV (--json / --csv on every command).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace roofline {

using Cell = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

struct Column {
  std::string key;    // machine name, used in JSON and CSV
  std::string title;  // header in text tables
  std::string unit;   // shown after the title in text, as "unit" in JSON
  int digits = -1;    // decimals for doubles in text; -1 picks 3 significant digits
  int max_width = 0;  // text only: longer strings are shortened with "…" (0 = no limit)
};

class Table {
 public:
  enum class Layout { Grid, Properties };  // Properties: one "title: value" line per row

  Table() = default;
  Table(std::string id, std::string title, Layout layout = Layout::Grid)
      : id_(std::move(id)), title_(std::move(title)), layout_(layout) {}

  Table& col(std::string key, std::string title, std::string unit = {}, int digits = -1,
             int max_width = 0);
  Table& row(std::vector<Cell> cells);  // one cell per column
  // Properties tables: key, title, value, unit.
  Table& prop(std::string key, std::string title, Cell value, std::string unit = {});
  Table& note(std::string text);

  const std::string& id() const { return id_; }
  const std::string& title() const { return title_; }
  Layout layout() const { return layout_; }
  const std::vector<Column>& columns() const { return cols_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  const std::vector<std::string>& notes() const { return notes_; }
  std::vector<std::vector<Cell>>& mutable_rows() { return rows_; }
  bool empty() const { return rows_.empty(); }

 private:
  std::string id_, title_;
  Layout layout_ = Layout::Grid;
  std::vector<Column> cols_;
  std::vector<std::vector<Cell>> rows_;
  std::vector<std::string> notes_;
};

enum class Format { Text, Json, Csv };

class Report {
 public:
  explicit Report(std::string command = {}) : command_(std::move(command)) {}
  Table& add(Table t);
  void warn(std::string text) { warnings_.push_back(std::move(text)); }
  void info(std::string text) { infos_.push_back(std::move(text)); }
  void set_run_id(std::int64_t id) { run_id_ = id; }
  void append(const Report& other);  // tables, warnings and notes of another report

  const std::string& command() const { return command_; }
  const std::vector<Table>& tables() const { return tables_; }
  std::vector<Table>& tables() { return tables_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::vector<std::string>& infos() const { return infos_; }
  std::int64_t run_id() const { return run_id_; }
  const Table* find(const std::string& id) const;
  // A brief text output (a command whose report is longer than a screen,
  // `analyze`): only these tables are printed as text, in the report's order,
  // and the first few warnings, then one line naming what was left out and
  // `rest` (where it is: the run's page). JSON, CSV and the stored report keep
  // everything. Empty ids: the whole report, as always.
  void set_brief(std::vector<std::string> table_ids, std::string rest) {
    brief_ = std::move(table_ids), brief_rest_ = std::move(rest);
  }
  const std::vector<std::string>& brief() const { return brief_; }
  const std::string& brief_rest() const { return brief_rest_; }

 private:
  std::string command_;
  std::vector<Table> tables_;
  std::vector<std::string> warnings_, infos_;
  std::int64_t run_id_ = 0;
  std::vector<std::string> brief_;
  std::string brief_rest_;
};

// width (text only): the most columns a line may take, 0 for no limit. A grid
// wider than that shortens its widest text columns (to 12 columns at least,
// the cut marked "…"), then splits into blocks of columns, each repeating the
// first column; notes and messages wrap.
void render(const Report& report, Format format, std::ostream& out, size_t width = 0);
void render_text(const Table& table, std::ostream& out, size_t width = 0);
// The text width for a terminal on standard output: its columns, at most 120
// (0 when standard output is not a terminal: no limit).
size_t terminal_text_width();
nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const Cell& cell);
// Text of one cell as the text renderer shows it (no width limit).
std::string cell_text(const Cell& cell, int digits = -1);

}  // namespace roofline
