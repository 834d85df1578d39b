// Small string helpers shared by every area.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool keep_empty = false);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string to_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view part);

// Text safe to print on a terminal: control characters (C0, DEL, and the C1
// controls U+0080-U+009F) shown as \xNN instead of acting (a kernel name or an
// argument holding ESC sequences could otherwise clear the screen or set the
// window title). Everything else, UTF-8 included, is kept; newlines too when
// `keep_newlines` (messages of several lines).
std::string printable(std::string_view s, bool keep_newlines = false);
// Columns a UTF-8 string takes on a terminal (one per code point).
size_t display_width(std::string_view s);
// Cuts a string to at most `width` columns, ending it with "…" when cut.
std::string shorten(std::string_view s, size_t width);

// 3 significant digits by default: 1234.5 -> "1234" (no exponent below 1e6), 0.01234 -> "0.0123".
std::string format_sig(double v, int sig = 3);
// SI-prefixed value: format_si(3.35e12, "B/s") -> "3.35 TB/s".
std::string format_si(double v, std::string_view unit, int sig = 3);
// Byte counts with binary prefixes: 50331648 -> "48 MiB".
std::string format_bytes(double bytes);
// Seconds as ns/µs/ms/s.
std::string format_seconds(double s);

// Parses "1,64,128" into integers; throws a usage Error naming `what` on bad input.
std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what);
std::int64_t parse_int(std::string_view s, std::string_view what);
double parse_double(std::string_view s, std::string_view what);
// Parses sizes such as "64M", "1G", "4096" (binary multiples) into bytes.
std::uint64_t parse_size(std::string_view s, std::string_view what);

}  // namespace roofline
