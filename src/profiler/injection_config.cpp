#include "roofline/profiler/injection_config.hpp"

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::prof {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  throw Error(ErrorKind::Input, "ROOFLINE_PROFILE_CONFIG: " + what,
              "roofline profile writes this variable for the program it starts: unset it, or start the program "
              "through roofline profile");
}

bool boolean(const json& v, const std::string& key) {
  if (!v.is_boolean()) bad(key + " must be true or false, not " + json_text(v));
  return v.get<bool>();
}

std::uint64_t unsigned_int(const json& v, const std::string& key, std::uint64_t max) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
    bad(key + " must be a whole number from 0 to " + std::to_string(max) + ", not " + json_text(v));
  return v.get<std::uint64_t>();
}

std::string text(const json& v, const std::string& key) {
  if (!v.is_string() || v.get<std::string>().empty()) bad(key + " must be a non-empty string, not " + json_text(v));
  return v.get<std::string>();
}

}  // namespace

std::string InjectionConfig::to_text() const {
  const json j = {{"out_dir", out_dir},
                  {"trace", trace},
                  {"trace_limit", trace_limit},
                  {"device", device},
                  {"counters", counters},
                  {"counters_limit", counters_limit},
                  {"metrics", metrics},
                  {"pm_sampling", pm_sampling},
                  {"pm_interval_ns", pm_interval_ns},
                  {"capture_range", capture_range},
                  {"delay_ns", delay_ns},
                  {"duration_ns", duration_ns},
                  {"program_start_ns", program_start_ns}};
  try {
    return json_text(j);
  } catch (const json::exception&) {
    throw Error(ErrorKind::Input, "the profile folder '" + out_dir + "' or a metric name is not valid UTF-8",
                "give --output-dir a folder whose name is UTF-8");
  }
}

InjectionConfig InjectionConfig::parse(const std::string& s) {
  json j;
  try {
    j = json::parse(s);
  } catch (const json::exception& e) {
    bad(std::string("not JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad("expected a JSON object, not " + json_text(j));
  InjectionConfig c;
  constexpr auto kU32 = std::numeric_limits<std::uint32_t>::max();
  constexpr auto kU64 = std::numeric_limits<std::uint64_t>::max();
  for (const auto& [key, v] : j.items()) {
    if (key == "out_dir")
      c.out_dir = text(v, key);
    else if (key == "trace")
      c.trace = boolean(v, key);
    else if (key == "trace_limit")
      c.trace_limit = unsigned_int(v, key, kU64);
    else if (key == "device")
      c.device = static_cast<int>(unsigned_int(v, key, std::numeric_limits<int>::max()));
    else if (key == "counters")
      c.counters = boolean(v, key);
    else if (key == "counters_limit")
      c.counters_limit = static_cast<std::uint32_t>(unsigned_int(v, key, kU32));
    else if (key == "metrics") {
      if (!v.is_array()) bad("metrics must be a list of metric names, not " + json_text(v));
      c.metrics.clear();
      for (const auto& m : v) c.metrics.push_back(text(m, "each metric"));
    } else if (key == "pm_sampling")
      c.pm_sampling = boolean(v, key);
    else if (key == "pm_interval_ns")
      c.pm_interval_ns = unsigned_int(v, key, kU64);
    else if (key == "capture_range") {
      if (!v.is_string()) bad(key + " must be a string, not " + json_text(v));
      c.capture_range = v.get<std::string>();
      if (!c.capture_range.empty())
        if (std::string why = CaptureSpec::problem(c.capture_range); !why.empty()) bad(key + ": " + why);
    } else if (key == "delay_ns")
      c.delay_ns = unsigned_int(v, key, kMaxCaptureNs);
    else if (key == "duration_ns")
      c.duration_ns = unsigned_int(v, key, kMaxCaptureNs);
    else if (key == "program_start_ns")
      c.program_start_ns = unsigned_int(v, key, kU64);
    else
      bad("unknown field '" + key + "' (a roofline profile of another version?)");
  }
  return c;
}

CaptureSpec InjectionConfig::capture() const {
  CaptureSpec s;
  if (!capture_range.empty())
    if (std::optional<CaptureSpec> r = CaptureSpec::parse_range(capture_range)) s = *r;
  s.delay_ns = delay_ns;
  s.duration_ns = duration_ns;
  return s;
}

std::pair<std::string, std::string> InjectionConfig::environment_variable() const {
  return {std::string(env::declaration(env::Var::ProfileConfig).name), to_text()};
}

InjectionConfig InjectionConfig::from_environment() {
  std::optional<std::string> s = env::get(env::Var::ProfileConfig);
  return s ? parse(*s) : InjectionConfig{};
}

}  // namespace roofline::prof
