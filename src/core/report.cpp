#include "roofline/core/report.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

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

// Wraps `text` at `width` columns (0: no limit), the first line after
// `first`, the others after `indent`.
void wrap(std::ostream& out, const std::string& first, const std::string& indent, const std::string& text,
          size_t width) {
  if (width == 0 || display_width(first) + display_width(text) <= width) {
    out << first << text << '\n';
    return;
  }
  std::string line = first;
  size_t cols = display_width(first);
  bool empty = true;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    const size_t w = display_width(word);
    if (!empty && cols + 1 + w > width) {
      out << line << '\n';
      line = indent;
      cols = display_width(indent);
      empty = true;
    }
    if (!empty) line += ' ', ++cols;
    line += word;
    cols += w;
    empty = false;
    i = j + 1;
  }
  out << line << '\n';
}

void render_grid(const Table& t, std::ostream& out, size_t limit) {
  const auto& cols = t.columns();
  std::vector<std::vector<std::string>> text(t.rows().size(), std::vector<std::string>(cols.size()));
  std::vector<std::string> heads(cols.size());
  std::vector<size_t> width(cols.size());
  std::vector<bool> right(cols.size(), false);
  for (size_t c = 0; c < cols.size(); ++c) heads[c] = header_of(cols[c]), width[c] = display_width(heads[c]);
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
  auto span = [&](const std::vector<size_t>& which) {
    size_t total = 2;
    for (size_t k = 0; k < which.size(); ++k) total += width[which[k]] + (k + 1 < which.size() ? 2 : 0);
    return total;
  };
  std::vector<size_t> all(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) all[c] = c;
  if (limit > 0 && span(all) > limit) {
    // First the widest text columns give way, to 24 columns at least, if that makes the table fit;
    // else it splits into blocks of columns (below), the first column (repeated) cut to a third of
    // the width and any other text column to what fits beside it.
    constexpr size_t kMinText = 24;
    const std::vector<size_t> natural = width;
    while (span(all) > limit) {
      size_t widest = cols.size();
      for (size_t c = 0; c < cols.size(); ++c)
        if (!right[c] && width[c] > kMinText && (widest == cols.size() || width[c] > width[widest])) widest = c;
      if (widest == cols.size()) break;
      width[widest] -= std::min(width[widest] - kMinText, span(all) - limit);
    }
    if (span(all) > limit) {
      width = natural;
      if (!right[0]) width[0] = std::min(width[0], std::max<size_t>(12, limit / 3));
      for (size_t c = 1; c < cols.size(); ++c)
        if (!right[c] && span({0, c}) > limit) width[c] = std::max<size_t>(12, limit - span({0}) - 2);
    }
    for (size_t c = 0; c < cols.size(); ++c) {
      heads[c] = shorten(heads[c], width[c]);
      for (auto& row : text) row[c] = shorten(row[c], width[c]);
    }
  }
  // Blocks of columns that fit, each after the first repeating column 0.
  std::vector<std::vector<size_t>> blocks(1);
  for (size_t c = 0; c < cols.size(); ++c) {
    std::vector<size_t> tryit = blocks.back();
    tryit.push_back(c);
    if (limit > 0 && blocks.back().size() > (blocks.size() > 1 ? 1u : 0u) && span(tryit) > limit)
      blocks.push_back({0, c});
    else
      blocks.back() = std::move(tryit);
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto& which = blocks[b];
    if (b > 0) out << "  (continued)\n";
    auto emit = [&](size_t k, const std::string& s) {
      const size_t c = which[k];
      const size_t w = display_width(s);
      const size_t pad = width[c] > w ? width[c] - w : 0;
      const bool last = k + 1 == which.size();
      if (right[c]) out << std::string(pad, ' ') << s;
      else out << s << (last ? std::string() : std::string(pad, ' '));
      if (!last) out << "  ";
    };
    out << "  ";
    for (size_t k = 0; k < which.size(); ++k) emit(k, heads[which[k]]);
    out << "\n  " << std::string(span(which) - 2, '-') << '\n';
    for (const auto& row : text) {
      out << "  ";
      for (size_t k = 0; k < which.size(); ++k) emit(k, row[which[k]]);
      out << '\n';
    }
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

void render_text(const Table& t, std::ostream& out, size_t width) {
  if (!t.title().empty()) out << printable(t.title()) << '\n';
  if (t.rows().empty()) {
    out << "  (none)\n";
  } else if (t.layout() == Table::Layout::Properties) {
    render_properties(t, out);
  } else {
    render_grid(t, out, width);
  }
  for (const auto& n : t.notes()) wrap(out, "  note: ", "        ", printable(n, true), width);
}

size_t terminal_text_width() {
  if (!isatty(STDOUT_FILENO)) return 0;
  winsize ws{};
  const size_t cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 120;
  return std::min<size_t>(std::max<size_t>(cols, 60), 120);
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

void render(const Report& report, Format format, std::ostream& out, size_t width) {
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
      const auto& brief = report.brief();
      const auto shown = [&](const Table& t) {
        return brief.empty() || std::find(brief.begin(), brief.end(), t.id()) != brief.end();
      };
      constexpr size_t kBriefWarnings = 3;
      bool first = true;
      std::vector<std::string> left_out;
      for (const auto& t : report.tables()) {
        if (!shown(t)) {
          left_out.push_back(t.title().empty() ? t.id() : t.title());
          continue;
        }
        if (!first) out << '\n';
        first = false;
        render_text(t, out, width);
      }
      for (const auto& i : report.infos()) wrap(out, "note: ", "      ", printable(i, true), width);
      const auto& warnings = report.warnings();
      const size_t warn_n = brief.empty() ? warnings.size() : std::min(warnings.size(), kBriefWarnings);
      for (size_t i = 0; i < warn_n; ++i) wrap(out, "warning: ", "         ", printable(warnings[i], true), width);
      if (!brief.empty() && (!left_out.empty() || warn_n < warnings.size())) {
        std::string more = fmt::format("{} more tables", left_out.size());
        if (warn_n < warnings.size()) more += fmt::format(" and {} more warnings", warnings.size() - warn_n);
        wrap(out, "more: ", "      ",
             printable(fmt::format("{} ({}{}): {}", more, join(std::vector<std::string>(left_out.begin(),
                                                                                        left_out.begin() + std::min<size_t>(left_out.size(), 4)),
                                                                 "; "),
                                   left_out.size() > 4 ? "; …" : "", report.brief_rest()),
                       true),
             width);
      }
      if (report.run_id() > 0) out << "stored as run " << report.run_id() << '\n';
      return;
    }
  }
}

}  // namespace roofline
