// libFuzzer target of BERT's WordPiece tokenizer. The first byte picks the mode:
// bit 0 lowercasing, bit 1 the rest as a vocab.txt (from_text, the reader
// from_file runs) instead of text, bits 2-7 max_len (4 to 67). Text mode splits
// the rest at the first 0x1F byte into a question and a context, tokenized with
// a fixed vocabulary built here and encoded for question answering. Any bytes
// (invalid UTF-8 included) must give word pieces with ids inside the vocabulary
// and ordered, non-overlapping byte ranges inside the text, and an encoding laid
// out as [CLS] question [SEP] context [SEP] within max_len whose spans map back
// into the context; or be refused with roofline::Error — never crash, hang or
// allocate without limit. Build and run: see docs/testing.md "Sanitizers and fuzzing".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/bert_text.hpp"

namespace {

using namespace roofline;
using namespace roofline::engine::bert;

void check(bool ok) {
  if (!ok) std::abort();
}

// Specials, single letters and their continuations (so that most words split
// into pieces instead of ending as [UNK]), some words, accented and CJK pieces.
std::vector<std::string> fixed_vocab() {
  std::vector<std::string> v = {"[PAD]",  "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "un", "##aff",
                                "##able", "ing",   "##ing", "é",     "##é",    "ß",   "中", "国",
                                "“",      "”",     "—",     "。",    "ü",      "##ü", "σ",  "и"};
  for (char c = 'a'; c <= 'z'; ++c) {
    v.push_back(std::string(1, c));
    v.push_back("##" + std::string(1, c));
    v.push_back(std::string(1, static_cast<char>(c - 'a' + 'A')));
  }
  for (char c = '!'; c <= '/'; ++c) v.push_back(std::string(1, c));
  for (char c = '0'; c <= '9'; ++c) v.push_back(std::string(1, c));
  return v;
}

const WordPieceTokenizer& fixed(bool lower_case) {
  static const WordPieceTokenizer cased = WordPieceTokenizer::from_tokens(fixed_vocab(), false);
  static const WordPieceTokenizer uncased = WordPieceTokenizer::from_tokens(fixed_vocab(), true);
  return lower_case ? uncased : cased;
}

// Word pieces: known ids, non-empty byte ranges in order inside the text.
std::vector<WordPieceTokenizer::Piece> check_pieces(const WordPieceTokenizer& t, std::string_view text) {
  auto pieces = t.tokenize(text);
  check(pieces.size() <= text.size());
  std::size_t at = 0;
  for (const auto& p : pieces) {
    check(p.id >= 0 && static_cast<std::size_t>(p.id) < t.vocab_size());
    check(p.begin >= at && p.begin < p.end && p.end <= text.size());
    at = p.end;
  }
  check(t.basic_tokens(text).size() <= pieces.size());
  return pieces;
}

void check_encoding(const WordPieceTokenizer& t, std::string_view question, std::string_view context,
                    std::int64_t max_len) {
  WordPieceTokenizer::Encoding e;
  try {
    e = t.encode_question_context(question, context, max_len);
  } catch (const Error& err) {
    check(err.kind() == ErrorKind::Input);
    return;
  }
  const std::size_t n = e.ids.size();
  check(n >= 4 && static_cast<std::int64_t>(n) <= max_len);
  check(e.type_ids.size() == n && e.context_bytes.size() == n);
  check(e.ids[0] == t.cls_id() && e.ids[n - 1] == t.sep_id());
  check(e.context_begin >= 2 && e.context_begin < e.context_end && e.context_end == static_cast<std::int64_t>(n) - 1);
  check(e.ids[static_cast<std::size_t>(e.context_begin) - 1] == t.sep_id());
  const std::size_t context_pieces = t.tokenize(context).size();
  const std::size_t kept = static_cast<std::size_t>(e.context_end - e.context_begin);
  check(e.truncated == (kept < context_pieces) && kept <= context_pieces);
  for (std::size_t i = 0; i < n; ++i) {
    const bool inside = static_cast<std::int64_t>(i) >= e.context_begin && static_cast<std::int64_t>(i) < e.context_end;
    check(e.type_ids[i] == (static_cast<std::int64_t>(i) >= e.context_begin ? 1 : 0));
    const auto [b, f] = e.context_bytes[i];
    if (inside)
      check(b < f && f <= context.size());
    else
      check(b == std::string::npos && f == std::string::npos);
  }
  const std::string all = WordPieceTokenizer::span_text(e, context, e.context_begin, e.context_end - 1);
  check(!all.empty() && context.find(all) != std::string_view::npos);
  check(WordPieceTokenizer::span_text(e, context, 0, e.context_end).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool lower_case = data[0] & 1;
  const bool vocab_mode = data[0] & 2;
  const std::int64_t max_len = 4 + (data[0] >> 2);
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  if (vocab_mode) {
    try {
      const WordPieceTokenizer t = WordPieceTokenizer::from_text(rest, "fuzz vocab", lower_case);
      check(t.vocab_size() > 0 && t.token(t.unk_id()) == "[UNK]" && t.token(t.cls_id()) == "[CLS]");
      for (std::size_t i = 0; i < t.vocab_size(); ++i)
        check(t.find(t.token(static_cast<std::int32_t>(i))) == static_cast<std::int32_t>(i));
      // The vocabulary's own text through it: every token is a word or pieces of one.
      check_pieces(t, rest);
      check_encoding(t, "the question", rest, max_len);
    } catch (const Error& e) {
      check(e.kind() == ErrorKind::Input);
    }
    return 0;
  }

  const WordPieceTokenizer& t = fixed(lower_case);
  const std::size_t cut = rest.find('\x1f');
  const std::string_view question = cut == std::string_view::npos ? rest : rest.substr(0, cut);
  const std::string_view context = cut == std::string_view::npos ? rest : rest.substr(cut + 1);
  check_pieces(t, question);
  check_pieces(t, context);
  check_encoding(t, question, context, max_len);
  return 0;
}
