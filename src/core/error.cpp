#include "roofline/core/error.hpp"

namespace roofline {

int Error::exit_code() const noexcept {
  switch (kind_) {
    case ErrorKind::Usage: return 2;
    case ErrorKind::Input: return 3;
    case ErrorKind::Device: return 4;
    case ErrorKind::Store: return 5;
    case ErrorKind::Unsupported: return 6;
    case ErrorKind::Numeric: return 7;
    case ErrorKind::Internal: return 1;
  }
  return 1;
}

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Usage: return "usage";
    case ErrorKind::Input: return "input";
    case ErrorKind::Device: return "device";
    case ErrorKind::Store: return "store";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Numeric: return "numeric";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

void throw_usage(const std::string& what, const std::string& hint) {
  throw Error(ErrorKind::Usage, what, hint);
}
void throw_input(const std::string& what, const std::string& hint) {
  throw Error(ErrorKind::Input, what, hint);
}
void throw_device(const std::string& what, const std::string& hint) {
  throw Error(ErrorKind::Device, what, hint);
}
void throw_unsupported(const std::string& what, const std::string& hint) {
  throw Error(ErrorKind::Unsupported, what, hint);
}

}  // namespace roofline
