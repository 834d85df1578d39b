#include "roofline/core/report.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline {

Table& Table::col(std::string key, std::string title, std::string unit, int digits,
                  int max_width) {
  ROOFLINE_ASSERT(rows_.empty(), "columns must be declared before rows");
  cols_.push_back({std::move(key), std::move(title), std::move(unit), digits, max_width});
  return *this;
}

Table& Table::row(std::vector<Cell> cells) {
  ROOFLINE_ASSERT(cells.size() == cols_.size(), "row width differs from the table's columns in " + id_);
  rows_.push_back(std::move(cells));
  return *this;
}

Table& Table::prop(std::string key, std::string title, Cell value, std::string unit) {
  if (cols_.empty()) {
    layout_ = Layout::Properties;
    col("key", "Key").col("property", "Property").col("value", "Value").col("unit", "Unit");
  }
  return row({std::move(key), std::move(title), std::move(value), std::move(unit)});
}

Table& Table::note(std::string text) {
  notes_.push_back(std::move(text));
  return *this;
}

Table& Report::add(Table t) {
  tables_.push_back(std::move(t));
  return tables_.back();
}

void Report::append(const Report& other) {
  for (const auto& t : other.tables_) tables_.push_back(t);
  for (const auto& w : other.warnings_) warnings_.push_back(w);
  for (const auto& i : other.infos_) infos_.push_back(i);
}

const Table* Report::find(const std::string& id) const {
  for (const auto& t : tables_)
    if (t.id() == id) return &t;
  return nullptr;
}

std::string cell_text(const Cell& cell, int digits) {
  struct V {
    int digits;
    std::string operator()(std::monostate) const { return "-"; }
    std::string operator()(bool b) const { return b ? "yes" : "no"; }
    std::string operator()(std::int64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const {
      if (std::isnan(v)) return "n/a";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      if (digits >= 0) return fmt::format("{:.{}f}", v, digits);
      return format_sig(v, 3);
    }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(V{digits}, cell);
}

nlohmann::json to_json(const Cell& cell) {
  struct V {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(bool b) const { return b; }
    nlohmann::json operator()(std::int64_t v) const { return v; }
    nlohmann::json operator()(double v) const {
      if (!std::isfinite(v)) return nullptr;
      return v;
    }
    nlohmann::json operator()(const std::string& s) const { return s; }
  };
  return std::visit(V{}, cell);
}

namespace {

bool is_numeric(const Cell& c) {
  return std::holds_alternative<std::int64_t>(c) || std::holds_alternative<double>(c);
}

std::string header_of(const Column& c) {
  return c.unit.empty() ? c.title : c.title + " (" + c.unit + ")";
}

void render_properties(const Table& t, std::ostream& out) {
  size_t w = 0;
  for (const auto& r : t.rows()) w = std::max(w, display_width(printable(cell_text(r[1]))));
  for (const auto& r : t.rows()) {
    std::string title = printable(cell_text(r[1]));
    std::string value = printable(cell_text(r[2], -1));
    std::string unit = printable(cell_text(r[3]));
    out << "  " << title << ':' << std::string(w - display_width(title) + 1, ' ') << value;
    if (unit != "-" && !unit.empty()) out << ' ' << unit;
    out << '\n';
  }
}

void render_grid(const Table& t, std::ostream& out) {
  const auto& cols = t.columns();
  std::vector<std::vector<std::string>> text(t.rows().size(), std::vector<std::string>(cols.size()));
  std::vector<size_t> width(cols.size());
  std::vector<bool> right(cols.size(), false);
  for (size_t c = 0; c < cols.size(); ++c) width[c] = display_width(header_of(cols[c]));
  for (size_t r = 0; r < t.rows().size(); ++r) {
    for (size_t c = 0; c < cols.size(); ++c) {
      const Cell& cell = t.rows()[r][c];
      std::string s = printable(cell_text(cell, cols[c].digits));
      if (cols[c].max_width > 0) s = shorten(s, static_cast<size_t>(cols[c].max_width));
      if (is_numeric(cell)) right[c] = true;
      width[c] = std::max(width[c], display_width(s));
      text[r][c] = std::move(s);
    }
  }
  auto emit = [&](size_t c, const std::string& s) {
    size_t pad = width[c] - display_width(s);
    bool last = c + 1 == cols.size();
    if (right[c]) out << std::string(pad, ' ') << s;
    else out << s << (last ? std::string() : std::string(pad, ' '));
    if (!last) out << "  ";
  };
  out << "  ";
  for (size_t c = 0; c < cols.size(); ++c) emit(c, header_of(cols[c]));
  out << "\n  ";
  size_t total = 0;
  for (size_t c = 0; c < cols.size(); ++c) total += width[c] + (c + 1 < cols.size() ? 2 : 0);
  out << std::string(total, '-') << '\n';
  for (const auto& row : text) {
    out << "  ";
    for (size_t c = 0; c < cols.size(); ++c) emit(c, row[c]);
    out << '\n';
  }
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"') r += '"';
    r += ch;
  }
  return r + '"';
}

std::string csv_cell(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (const double* d = std::get_if<double>(&cell)) {
    if (!std::isfinite(*d)) return "";
    return fmt::format("{}", *d);
  }
  if (const bool* b = std::get_if<bool>(&cell)) return *b ? "true" : "false";
  return csv_escape(cell_text(cell));
}

}  // namespace

void render_text(const Table& t, std::ostream& out) {
  if (!t.title().empty()) out << printable(t.title()) << '\n';
  if (t.rows().empty()) {
    out << "  (none)\n";
  } else if (t.layout() == Table::Layout::Properties) {
    render_properties(t, out);
  } else {
    render_grid(t, out);
  }
  for (const auto& n : t.notes()) out << "  note: " << printable(n, true) << '\n';
}

nlohmann::json to_json(const Report& report) {
  nlohmann::json j;
  j["command"] = report.command();
  if (report.run_id() > 0) j["run_id"] = report.run_id();
  j["tables"] = nlohmann::json::array();
  for (const auto& t : report.tables()) {
    nlohmann::json jt;
    jt["id"] = t.id();
    jt["title"] = t.title();
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& c : t.columns()) cols.push_back({{"key", c.key}, {"title", c.title}, {"unit", c.unit}});
    jt["columns"] = cols;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : t.rows()) {
      nlohmann::json jr = nlohmann::json::object();
      for (size_t c = 0; c < t.columns().size(); ++c) jr[t.columns()[c].key] = to_json(r[c]);
      rows.push_back(std::move(jr));
    }
    jt["rows"] = rows;
    jt["notes"] = t.notes();
    j["tables"].push_back(std::move(jt));
  }
  j["warnings"] = report.warnings();
  j["notes"] = report.infos();
  return j;
}

void render(const Report& report, Format format, std::ostream& out) {
  switch (format) {
    case Format::Json:
      out << json_text(to_json(report), 2) << '\n';
      return;
    case Format::Csv: {
      bool many = report.tables().size() > 1;
      bool first = true;
      for (const auto& t : report.tables()) {
        if (!first) out << '\n';
        first = false;
        if (many) out << "# " << t.id() << '\n';
        for (size_t c = 0; c < t.columns().size(); ++c)
          out << (c ? "," : "") << csv_escape(t.columns()[c].key);
        out << '\n';
        for (const auto& r : t.rows()) {
          for (size_t c = 0; c < r.size(); ++c) out << (c ? "," : "") << csv_cell(r[c]);
          out << '\n';
        }
      }
      return;
    }
    case Format::Text: {
      bool first = true;
      for (const auto& t : report.tables()) {
        if (!first) out << '\n';
        first = false;
        render_text(t, out);
      }
      for (const auto& i : report.infos()) out << "note: " << printable(i, true) << '\n';
      for (const auto& w : report.warnings()) out << "warning: " << printable(w, true) << '\n';
      if (report.run_id() > 0) out << "stored as run " << report.run_id() << '\n';
      return;
    }
  }
}

}  // namespace roofline
