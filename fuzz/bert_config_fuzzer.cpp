// libFuzzer target of BERT's config.json reader (parse_bert_config, the code
// read_bert_config runs on a file's text): any bytes must either parse into a
// config that passes validate() with every size within its limit, or be refused
// with roofline::Error (Input, or Unsupported for an activation or position
// embedding the engine lacks) — never crash, hang or allocate without limit.
// What parsed is written again with bert_config_json and must read back the
// same. Build and run: see docs/testing.md "Sanitizers and fuzzing".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "roofline/core/error.hpp"
#include "roofline/engine/bert_text.hpp"

namespace {

using namespace roofline;
using namespace roofline::engine::bert;

void check(bool ok) {
  if (!ok) std::abort();
}

bool same(const BertConfig& a, const BertConfig& b) {
  return a.vocab_size == b.vocab_size && a.hidden == b.hidden && a.layers == b.layers && a.heads == b.heads &&
         a.intermediate == b.intermediate && a.max_positions == b.max_positions && a.type_vocab == b.type_vocab &&
         a.layer_norm_eps == b.layer_norm_eps && a.hidden_dropout == b.hidden_dropout &&
         a.attention_dropout == b.attention_dropout && a.pad_token_id == b.pad_token_id &&
         a.hidden_act == b.hidden_act && a.architecture == b.architecture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  BertConfig c;
  try {
    c = parse_bert_config(text, "fuzz input");
  } catch (const Error& e) {
    // Refused with a message: what bad input should get.
    check(e.kind() == ErrorKind::Input || e.kind() == ErrorKind::Unsupported);
    check(!e.hint().empty());
    return 0;
  }
  // What parsed is a usable, bounded config.
  check(c.vocab_size > 0 && c.vocab_size <= kMaxVocab);
  check(c.hidden > 0 && c.hidden <= kMaxHidden && c.heads > 0 && c.hidden % c.heads == 0);
  check(c.head_dim() * c.heads == c.hidden);
  check(c.layers > 0 && c.layers <= kMaxLayers && c.intermediate > 0 && c.intermediate <= kMaxIntermediate);
  check(c.max_positions > 0 && c.max_positions <= kMaxPositions && c.type_vocab > 0 && c.type_vocab <= kMaxTypeVocab);
  check(c.pad_token_id >= -1 && c.pad_token_id < c.vocab_size);
  check(c.layer_norm_eps > 0.0f && c.layer_norm_eps < 1.0f);
  check(c.hidden_act == "gelu");
  c.validate();

  // Written again, it reads back the same.
  const BertConfig r = parse_bert_config(bert_config_json(c), "written");
  check(same(c, r));
  return 0;
}
