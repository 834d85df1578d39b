// Splits a demangled C++ kernel name into its parts (private to explain/).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace roofline::prof::detail {

struct Signature {
  std::string text;                        // demangled, trimmed, without a leading "void "
  std::string function;                    // qualified name without template arguments
  std::string base;                        // last component of `function`
  std::vector<std::string> scopes;         // namespaces/classes before `base` ("(anonymous namespace)" dropped)
  std::vector<std::string> template_args;  // top-level template arguments, trimmed
  std::string params;                      // the parameter list's contents
  bool has_params = false;
  bool truncated = false;  // "..." / "…" where a profiler cut the name
  bool in_scope(std::string_view s) const;
};

Signature parse_signature(std::string_view demangled);

// Splits at `sep` outside (), <>, [] and {} (operator names are skipped).
std::vector<std::string> split_top_level(std::string_view s, std::string_view sep);

// "(int)5" -> "5", "int=5" -> "5", "(bool)1" -> "1"; anything else trimmed.
std::string arg_value(std::string_view arg);

// All identifiers (letters, digits, '_') in `s`, in order.
std::vector<std::string> identifiers(std::string_view s);

}  // namespace roofline::prof::detail
