#include "src/profiler/explain/signature.hpp"

#include <algorithm>

#include "roofline/core/strings.hpp"

namespace roofline::prof::detail {

namespace {

bool is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

constexpr std::string_view kAnon = "(anonymous namespace)";

// Length of an operator name starting at s[i] ("operator()", "operator<"),
// so that its brackets are not taken for nesting; 0 when there is none.
size_t operator_len(std::string_view s, size_t i) {
  if (s.substr(i, 8) != "operator") return 0;
  if (i > 0 && is_ident(s[i - 1])) return 0;
  size_t j = i + 8;
  if (j < s.size() && is_ident(s[j])) return 0;
  while (j < s.size() && s[j] == ' ') ++j;
  static constexpr std::string_view ops[] = {"()", "[]", "<<=", ">>=", "<=>", "->*", "->",
                                             "<<", ">>", "<=",  ">=",  "<",   ">"};
  for (auto op : ops)
    if (s.substr(j, op.size()) == op) return j + op.size() - i;
  return j - i;
}

char closer(char open) {
  switch (open) {
    case '(':
      return ')';
    case '<':
      return '>';
    case '[':
      return ']';
    case '{':
      return '}';
    default:
      return 0;
  }
}

// Index of the bracket closing the one at s[open], or npos when the name was
// cut before it closed.
size_t match(std::string_view s, size_t open) {
  std::vector<char> stack{closer(s[open])};
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (size_t n = operator_len(s, i)) {
      i += n - 1;
      continue;
    }
    char c = s[i];
    if (char cl = closer(c)) {
      stack.push_back(cl);
    } else if (c == stack.back()) {
      stack.pop_back();
      if (stack.empty()) return i;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      // Mismatched: tolerate (a '>' from "->" outside operator names, say).
      if (c == '>' && std::find(stack.begin(), stack.end(), '>') == stack.end()) continue;
      while (!stack.empty() && stack.back() != c) stack.pop_back();
      if (!stack.empty()) stack.pop_back();
      if (stack.empty()) return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

bool Signature::in_scope(std::string_view s) const {
  for (const auto& sc : scopes)
    if (sc == s) return true;
  return false;
}

std::vector<std::string> split_top_level(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (size_t n = operator_len(s, i)) {
      i += n - 1;
      continue;
    }
    char c = s[i];
    if (c == '(' || c == '<' || c == '[' || c == '{')
      ++depth;
    else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0)
      --depth;
    else if (depth == 0 && s.substr(i, sep.size()) == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + sep.size();
      i = start - 1;
    }
  }
  std::string last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

std::string arg_value(std::string_view arg) {
  std::string a = trim(arg);
  if (!a.empty() && a[0] == '(') {  // "(int)5", "(bool)0", "(cudnnKernelDataType_t)2"
    size_t close = a.find(')');
    if (close != std::string::npos && close + 1 < a.size()) return trim(a.substr(close + 1));
  }
  size_t eq = a.find('=');  // nvprof style "int=5", "cudnnGenericOp_t=7"
  if (eq != std::string::npos && eq > 0 && a.find('<') == std::string::npos) return trim(a.substr(eq + 1));
  return a;
}

std::vector<std::string> identifiers(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    if (!is_ident(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && is_ident(s[j])) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

Signature parse_signature(std::string_view demangled) {
  Signature sig;
  std::string t = trim(demangled);
  if (starts_with(t, "void ")) t = trim(t.substr(5));
  if (starts_with(t, "<unnamed>")) t = std::string(kAnon) + t.substr(9);
  for (std::string_view cut : {std::string_view("..."), std::string_view("\xE2\x80\xA6")}) {
    if (t.find(cut) != std::string::npos) sig.truncated = true;
    while (ends_with(t, cut)) t = trim(t.substr(0, t.size() - cut.size()));
  }
  sig.text = t;

  // The function name ends at the first top-level '<' or '('.
  size_t i = 0, name_end = t.size();
  while (i < t.size()) {
    if (t.compare(i, kAnon.size(), kAnon) == 0) {
      i += kAnon.size();
      continue;
    }
    if (size_t n = operator_len(t, i)) {
      i += n;
      continue;
    }
    if (t[i] == '{') {
      size_t close = match(t, i);
      i = close == std::string::npos ? t.size() : close + 1;
      continue;
    }
    if (t[i] == '<' || t[i] == '(') {
      name_end = i;
      break;
    }
    ++i;
  }
  sig.function = trim(t.substr(0, name_end));
  size_t pos = name_end;
  if (pos < t.size() && t[pos] == '<') {
    size_t close = match(t, pos);
    std::string_view args =
        std::string_view(t).substr(pos + 1, close == std::string::npos ? std::string::npos : close - pos - 1);
    sig.template_args = split_top_level(args, ",");
    if (close == std::string::npos) {
      sig.truncated = true;
      pos = t.size();
    } else {
      pos = close + 1;
    }
  }
  while (pos < t.size() && t[pos] == ' ') ++pos;
  if (pos < t.size() && t[pos] == '(') {
    sig.has_params = true;
    size_t close = match(t, pos);
    if (close == std::string::npos) sig.truncated = true;
    sig.params =
        trim(std::string_view(t).substr(pos + 1, close == std::string::npos ? std::string::npos : close - pos - 1));
  }
  // Drop the profiler's ellipses: whole arguments, and the tail of a cut one.
  for (auto& a : sig.template_args) {
    for (std::string_view cut : {std::string_view("..."), std::string_view("\xE2\x80\xA6")})
      while (ends_with(a, cut) && a.size() > cut.size()) a = trim(a.substr(0, a.size() - cut.size()));
  }
  sig.template_args.erase(std::remove_if(sig.template_args.begin(), sig.template_args.end(),
                                         [](const std::string& a) { return a.empty() || a == "..."; }),
                          sig.template_args.end());

  for (auto& part : split_top_level(sig.function, "::")) {
    if (part == kAnon || part.empty()) continue;
    sig.scopes.push_back(part);
  }
  if (!sig.scopes.empty()) {
    sig.base = sig.scopes.back();
    sig.scopes.pop_back();
  }
  return sig;
}

}  // namespace roofline::prof::detail
