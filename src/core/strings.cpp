#include "roofline/core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "roofline/core/error.hpp"

namespace roofline {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep, bool keep_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      std::string part(s.substr(start, i - start));
      if (keep_empty || !part.empty()) out.push_back(std::move(part));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string r;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) r += sep;
    r += parts[i];
  }
  return r;
}

std::string to_lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string printable(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9F;
    if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string shorten(std::string_view s, size_t width) {
  if (display_width(s) <= width || width == 0) return std::string(s);
  std::string r;
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (cols + 1 >= width) break;
      ++cols;
    }
    r += s[i];
  }
  return r + "\xE2\x80\xA6";  // …
}

std::string format_sig(double v, int sig) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-4) return fmt::format("{:.{}g}", v, sig);
  int mag = static_cast<int>(std::floor(std::log10(a)));
  int decimals = std::max(0, sig - 1 - mag);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string format_si(double v, std::string_view unit, int sig) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  double a = std::fabs(v);
  int p = 0;
  while (a >= 1000.0 && p < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++p;
  }
  return format_sig(v, sig) + " " + prefixes[p] + std::string(unit);
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return format_sig(bytes, 3) + " " + units[u];
}

std::string format_seconds(double s) {
  double a = std::fabs(s);
  if (a < 1e-6) return format_sig(s * 1e9, 3) + " ns";
  if (a < 1e-3) return format_sig(s * 1e6, 3) + " \xC2\xB5s";
  if (a < 1.0) return format_sig(s * 1e3, 3) + " ms";
  return format_sig(s, 3) + " s";
}

std::int64_t parse_int(std::string_view s, std::string_view what) {
  std::string t = trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size())
    throw_usage(fmt::format("{} must be an integer, got '{}'", what, std::string(s)));
  return v;
}

double parse_double(std::string_view s, std::string_view what) {
  std::string t = trim(s);
  try {
    size_t used = 0;
    double v = std::stod(t, &used);
    if (used != t.size()) throw std::invalid_argument("trailing");
    return v;
  } catch (const std::exception&) {
    throw_usage(fmt::format("{} must be a number, got '{}'", what, std::string(s)));
  }
}

std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what) {
  std::vector<std::int64_t> out;
  for (const auto& part : split(s, ',')) out.push_back(parse_int(part, what));
  if (out.empty()) throw_usage(fmt::format("{} is empty", what));
  return out;
}

std::uint64_t parse_size(std::string_view s, std::string_view what) {
  std::string t = trim(s);
  if (t.empty()) throw_usage(fmt::format("{} is empty", what));
  std::uint64_t mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  if (last == 'B' && t.size() > 1) {  // accept "64MB"/"64MiB"-less forms: strip B
    t.pop_back();
    if (!t.empty() && (t.back() == 'i' || t.back() == 'I')) t.pop_back();
    last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
  }
  switch (last) {
    case 'K': mult = 1ull << 10; break;
    case 'M': mult = 1ull << 20; break;
    case 'G': mult = 1ull << 30; break;
    case 'T': mult = 1ull << 40; break;
    default: break;
  }
  if (mult != 1) t.pop_back();
  std::int64_t v = parse_int(t, what);
  if (v < 0) throw_usage(fmt::format("{} must not be negative, got '{}'", what, std::string(s)));
  return static_cast<std::uint64_t>(v) * mult;
}

}  // namespace roofline
