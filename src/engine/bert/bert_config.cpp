// BERT's config.json reader (Hugging Face BertConfig's keys) and its checks.
// The file is untrusted: every key is type-checked, every size bounded (see
// kMax* in the header) so that nothing built from a config can be made to
// allocate without limit, and each problem names the file, the key and what was
// found. Keys this engine does not use (torch_dtype, transformers_version,
// classifier_dropout, ...) are ignored, as Hugging Face ignores unknown ones.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bert_text.hpp"

namespace roofline::engine::bert {

namespace {

using json = nlohmann::json;

constexpr std::uint64_t kMaxConfigBytes = 16u << 20;  // config.json is about 1 KB

const char* const kConfigHint =
    "expected a Hugging Face BERT config.json (e.g. bert-base-cased's: \"hidden_size\": 768, "
    "\"num_attention_heads\": 12, ...)";

// A JSON value shown in a message: short, one line, safe on a terminal.
std::string shown(const json& v) {
  return shorten(printable(v.dump(-1, ' ', false, json::error_handler_t::replace)), 60);
}

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a floating-point number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

[[noreturn]] void bad_type(const std::string& where, std::string_view key, const json& v, std::string_view expected) {
  throw Error(ErrorKind::Input,
              fmt::format("{}: \"{}\" is {} ({}), not {}", where, key, shown(v), type_name(v), expected),
              fmt::format("write \"{}\" as {} in the config, as Hugging Face's BertConfig does", key, expected));
}

// An integer key: JSON integers only (768.0 or "768" would be a broken file,
// and Hugging Face would fail on them later, inside the model).
void read_int(const json& obj, const char* key, std::int64_t& out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  if (it->is_number_unsigned()) {
    // Past int64: refused by the range checks as absurd, not wrapped to a negative.
    const auto u = it->get<std::uint64_t>();
    out = u > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(u);
    return;
  }
  if (!it->is_number_integer()) bad_type(where, key, *it, "an integer");
  out = it->get<std::int64_t>();
}

void read_float(const json& obj, const char* key, float& out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  if (!it->is_number()) bad_type(where, key, *it, "a number");
  // Out of float's range reads as inf (a plain cast would be undefined) and is
  // refused by validate(); NaN cannot be written in JSON.
  const double d = it->get<double>();
  out = std::fabs(d) > std::numeric_limits<float>::max() ? std::copysign(std::numeric_limits<float>::infinity(), d)
                                                         : static_cast<float>(d);
}

void read_string(const json& obj, const char* key, std::string& out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  if (!it->is_string()) bad_type(where, key, *it, "a string");
  out = it->get<std::string>();
}

void check_size(const std::string& where, const char* key, std::int64_t v, std::int64_t max) {
  if (v <= 0)
    throw Error(ErrorKind::Input, fmt::format("{}: \"{}\" is {}; it must be a positive integer", where, key, v),
                kConfigHint);
  if (v > max)
    throw Error(
        ErrorKind::Input,
        fmt::format("{}: \"{}\" is {}, past this reader's limit of {} (an absurd size for BERT)", where, key, v, max),
        kConfigHint);
}

}  // namespace

void BertConfig::validate() const { validate("BERT config"); }

void BertConfig::validate(const std::string& where) const {
  check_size(where, "vocab_size", vocab_size, kMaxVocab);
  check_size(where, "hidden_size", hidden, kMaxHidden);
  check_size(where, "num_hidden_layers", layers, kMaxLayers);
  check_size(where, "num_attention_heads", heads, kMaxHidden);
  check_size(where, "intermediate_size", intermediate, kMaxIntermediate);
  check_size(where, "max_position_embeddings", max_positions, kMaxPositions);
  check_size(where, "type_vocab_size", type_vocab, kMaxTypeVocab);
  if (hidden % heads != 0)
    throw Error(
        ErrorKind::Input,
        fmt::format("{}: \"hidden_size\" {} is not divisible by \"num_attention_heads\" {}", where, hidden, heads),
        "each attention head takes hidden_size / num_attention_heads features: make hidden_size a multiple "
        "of num_attention_heads (bert-base: 768 and 12)");
  // eps is added to a variance before its square root: it must be a small positive number.
  if (!(std::isfinite(layer_norm_eps) && layer_norm_eps > 0.0f && layer_norm_eps < 1.0f))
    throw Error(ErrorKind::Input,
                fmt::format("{}: \"layer_norm_eps\" is {}; it must be positive and below 1", where, layer_norm_eps),
                "BERT uses 1e-12");
  const std::pair<const char*, float> dropouts[] = {{"hidden_dropout_prob", hidden_dropout},
                                                    {"attention_probs_dropout_prob", attention_dropout}};
  for (const auto& [key, p] : dropouts)
    if (!(p >= 0.0f && p <= 1.0f))
      throw Error(ErrorKind::Input, fmt::format("{}: \"{}\" is {}; a probability is in [0, 1]", where, key, p),
                  "BERT uses 0.1");
  if (pad_token_id < -1 || pad_token_id >= vocab_size)
    throw Error(
        ErrorKind::Input,
        fmt::format("{}: \"pad_token_id\" is {}, outside the vocabulary of {} tokens", where, pad_token_id, vocab_size),
        "pad_token_id is the id of [PAD] in vocab.txt (0 for BERT), or null");
  if (hidden_act != "gelu")
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: \"hidden_act\" '{}' is not supported: this engine's BERT runs \"gelu\" (the erf "
                            "form) only",
                            where, shorten(printable(hidden_act), 40)),
                "use a checkpoint trained with hidden_act \"gelu\" (every original BERT is)");
}

BertConfig bert_base_cased() { return BertConfig{}; }

BertConfig parse_bert_config(std::string_view text, const std::string& where) {
  json j;
  try {
    // nlohmann's parser is iterative (deep nesting cannot overflow the stack)
    // and refuses invalid UTF-8 inside strings.
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw Error(ErrorKind::Input, fmt::format("{}: not valid JSON ({})", where, shorten(printable(e.what()), 200)),
                kConfigHint);
  }
  if (!j.is_object())
    throw Error(ErrorKind::Input,
                fmt::format("{}: the config is {} ({}), not a JSON object", where, type_name(j), shown(j)),
                kConfigHint);

  // model_type first: another model's config fails on it, not on a key it lacks.
  if (auto it = j.find("model_type"); it != j.end()) {
    if (!it->is_string()) bad_type(where, "model_type", *it, "a string");
    if (it->get_ref<const std::string&>() != "bert")
      throw Error(ErrorKind::Input,
                  fmt::format("{}: a checkpoint of another architecture: model_type is '{}', not 'bert'", where,
                              shorten(printable(it->get_ref<const std::string&>()), 60)),
                  "pass a BERT checkpoint's config.json (model_type \"bert\", e.g. bert-base-cased)");
  }

  BertConfig c;
  read_int(j, "vocab_size", c.vocab_size, where);
  read_int(j, "hidden_size", c.hidden, where);
  read_int(j, "num_hidden_layers", c.layers, where);
  read_int(j, "num_attention_heads", c.heads, where);
  read_int(j, "intermediate_size", c.intermediate, where);
  read_int(j, "max_position_embeddings", c.max_positions, where);
  read_int(j, "type_vocab_size", c.type_vocab, where);
  read_float(j, "layer_norm_eps", c.layer_norm_eps, where);
  read_float(j, "hidden_dropout_prob", c.hidden_dropout, where);
  read_float(j, "attention_probs_dropout_prob", c.attention_dropout, where);
  if (auto it = j.find("pad_token_id"); it != j.end() && it->is_null())
    c.pad_token_id = -1;
  else
    read_int(j, "pad_token_id", c.pad_token_id, where);
  read_string(j, "hidden_act", c.hidden_act, where);

  if (auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) bad_type(where, "architectures", *it, "an array of strings");
    for (const auto& a : *it)
      if (!a.is_string()) bad_type(where, "architectures", *it, "an array of strings");
    if (!it->empty()) c.architecture = it->front().get<std::string>();
  }
  // Relative position embeddings change attention itself; only absolute ones are implemented.
  if (auto it = j.find("position_embedding_type"); it != j.end()) {
    if (!it->is_string()) bad_type(where, "position_embedding_type", *it, "a string");
    if (it->get_ref<const std::string&>() != "absolute")
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: \"position_embedding_type\" '{}' is not supported, only \"absolute\"", where,
                              shorten(printable(it->get_ref<const std::string&>()), 40)),
                  "use a checkpoint with absolute position embeddings (every original BERT has them)");
  }
  c.validate(where);
  return c;
}

std::string bert_config_json(const BertConfig& c) {
  json j = json::object();
  if (!c.architecture.empty()) j["architectures"] = json::array({c.architecture});
  j["attention_probs_dropout_prob"] = c.attention_dropout;
  j["hidden_act"] = c.hidden_act;
  j["hidden_dropout_prob"] = c.hidden_dropout;
  j["hidden_size"] = c.hidden;
  j["intermediate_size"] = c.intermediate;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["max_position_embeddings"] = c.max_positions;
  j["model_type"] = "bert";
  j["num_attention_heads"] = c.heads;
  j["num_hidden_layers"] = c.layers;
  j["pad_token_id"] = c.pad_token_id < 0 ? json(nullptr) : json(c.pad_token_id);
  j["position_embedding_type"] = "absolute";
  j["type_vocab_size"] = c.type_vocab;
  j["vocab_size"] = c.vocab_size;
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

BertConfig read_bert_config(const std::string& path) {
  const std::string text =
      detail::read_small_file(path, kMaxConfigBytes, "BERT config",
                              "pass the checkpoint's config.json (Hugging Face bert-base-cased has one beside its "
                              "vocab.txt and weights)");
  return parse_bert_config(text, path);
}

namespace detail {

std::string read_small_file(const std::string& path, std::uint64_t limit, std::string_view what,
                            std::string_view hint) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorKind::Input, fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)),
                std::string(hint));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorKind::Input, fmt::format("{}: the {} is not a regular file", path, what), std::string(hint));
  if (static_cast<std::uint64_t>(st.st_size) > limit)
    throw Error(
        ErrorKind::Input,
        fmt::format("{}: the {} is {} bytes, more than the {} this reader accepts", path, what, st.st_size, limit),
        std::string(hint));
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw Error(ErrorKind::Input, fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)),
                  std::string(hint));
    if (n == 0) break;  // shrank while read: keep what is there
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace detail

}  // namespace roofline::engine::bert
