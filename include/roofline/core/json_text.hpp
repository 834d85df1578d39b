// JSON text for output, the store and files: one way to write it. Strings that
// are not valid UTF-8 (a path or kernel name of arbitrary bytes on the command
// line or from a profiled program) have their bad bytes replaced by U+FFFD
// instead of failing the whole write (nlohmann's default throws type_error.316).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace roofline {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace roofline
