// Errors carry what went wrong and what to do instead. Commands throw them;
// only main() turns them into a message and an exit code.
#pragma once
#include <stdexcept>
#include <string>

namespace roofline {

enum class ErrorKind {
  Usage,        // bad command line (exit 2)
  Input,        // bad input file or data (exit 3)
  Device,       // no GPU, GPU error, out of memory (exit 4)
  Store,        // results database problem (exit 5)
  Unsupported,  // feature not available in this build or on this hardware (exit 6)
  Numeric,      // NaN/Inf or a failed correctness check (exit 7)
  Internal,     // a bug (exit 1)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what, std::string hint = {})
      : std::runtime_error(what), kind_(kind), hint_(std::move(hint)) {}
  ErrorKind kind() const noexcept { return kind_; }
  // What the user can do about it; may be empty.
  const std::string& hint() const noexcept { return hint_; }
  int exit_code() const noexcept;

 private:
  ErrorKind kind_;
  std::string hint_;
};

const char* to_string(ErrorKind kind) noexcept;

// Shorthands for the common kinds.
[[noreturn]] void throw_usage(const std::string& what, const std::string& hint = {});
[[noreturn]] void throw_input(const std::string& what, const std::string& hint = {});
[[noreturn]] void throw_device(const std::string& what, const std::string& hint = {});
[[noreturn]] void throw_unsupported(const std::string& what, const std::string& hint = {});

// Checks an invariant that only a bug can break.
#define ROOFLINE_ASSERT(cond, msg)                                                         \
  do {                                                                                     \
    if (!(cond))                                                                           \
      throw ::roofline::Error(::roofline::ErrorKind::Internal,                             \
                              std::string("internal error: ") + (msg) + " (" #cond ") at " \
                                  __FILE__ ":" + std::to_string(__LINE__));                \
  } while (0)

}  // namespace roofline
