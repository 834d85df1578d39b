// Extractive question answering on BertQA: see roofline/engine/bert.hpp.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/engine/bert.hpp"

namespace roofline::engine::bert {

WordPieceTokenizer checkpoint_tokenizer(const std::string& dir) {
  const std::filesystem::path d(dir);
  bool lower = false;
  if (std::ifstream f(d / "tokenizer_config.json"); f) {
    std::stringstream ss;
    ss << f.rdbuf();
    const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(ErrorKind::Input, fmt::format("{} is not a JSON object", (d / "tokenizer_config.json").string()),
                  "fix or remove tokenizer_config.json (without it the text is not lower-cased)");
    if (j.contains("do_lower_case") && j["do_lower_case"].is_boolean()) lower = j["do_lower_case"].get<bool>();
  }
  return WordPieceTokenizer::from_file((d / "vocab.txt").string(), lower);
}

QaAnswer answer_question(BertQA& model, const WordPieceTokenizer& tok, std::string_view question,
                         std::string_view context, std::int64_t max_len, std::int64_t max_answer) {
  if (static_cast<std::int64_t>(tok.vocab_size()) != model.config().vocab_size)
    throw Error(ErrorKind::Input,
                fmt::format("the vocabulary has {} word pieces and the model {}", tok.vocab_size(),
                            model.config().vocab_size),
                "use the vocab.txt of the checkpoint whose weights are loaded");
  const auto enc = tok.encode_question_context(question, context, std::min(max_len, model.config().max_positions));
  const BertBatch b = BertBatch::make({enc.ids}, {enc.type_ids}, true, tok.pad_id());
  const std::vector<float> logits = model.predict(b);  // (tokens, 2): start, end
  QaAnswer best;
  best.score = -std::numeric_limits<double>::infinity();
  for (std::int64_t s = enc.context_begin; s < enc.context_end; ++s)
    for (std::int64_t e = s; e < std::min(enc.context_end, s + max_answer); ++e) {
      const double score = double(logits[size_t(2 * s)]) + double(logits[size_t(2 * e + 1)]);
      if (score > best.score) {
        best.score = score;
        best.start = s;
        best.end = e;
      }
    }
  best.text = WordPieceTokenizer::span_text(enc, context, best.start, best.end);
  best.pieces = static_cast<std::int64_t>(enc.ids.size());
  best.truncated = enc.truncated;
  return best;
}

}  // namespace roofline::engine::bert
