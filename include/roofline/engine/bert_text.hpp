// BERT's text side, for Hugging Face bert-base-cased checkpoints: the model's
// config.json (BertConfig) and the WordPiece tokenizer of its vocab.txt with
// Hugging Face BertTokenizer's rules (a BasicTokenizer that cleans the text and
// splits it into words and punctuation, then greedy longest-match-first word
// pieces). Every reader validates what it reads: bad input is an Error(Input)
// naming the file, the key or line, and what was found; what the engine cannot
// run (another activation, another position embedding) is Error(Unsupported).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace roofline::engine::bert {

// The hyper-parameters of a BERT encoder, as config.json names them in the
// comments. Defaults are bert-base-cased's (what Hugging Face also assumes for a
// key the file leaves out, apart from vocab_size, whose HF default is 30522).
struct BertConfig {
  std::int64_t vocab_size = 28996;   // vocab_size
  std::int64_t hidden = 768;         // hidden_size
  std::int64_t layers = 12;          // num_hidden_layers
  std::int64_t heads = 12;           // num_attention_heads
  std::int64_t intermediate = 3072;  // intermediate_size
  std::int64_t max_positions = 512;  // max_position_embeddings
  std::int64_t type_vocab = 2;       // type_vocab_size
  float layer_norm_eps = 1e-12f;     // layer_norm_eps
  float hidden_dropout = 0.1f;       // hidden_dropout_prob
  float attention_dropout = 0.1f;    // attention_probs_dropout_prob
  std::int64_t pad_token_id = 0;     // pad_token_id; -1 when config.json says null
  std::string hidden_act = "gelu";   // only "gelu" (the erf form) is supported
  std::string architecture;          // architectures[0] when present, e.g. "BertForQuestionAnswering"

  std::int64_t head_dim() const { return hidden / heads; }
  // Positive sizes within the limits below, hidden divisible by heads, eps and
  // dropouts in range, pad_token_id inside the vocabulary, hidden_act "gelu".
  // Error(Input) naming the field (config.json's key) and its value, prefixed
  // "BERT config: "; Error(Unsupported) for another activation.
  void validate() const;
  // The same with `where` (a file name) leading each message.
  void validate(const std::string& where) const;
};

// Sizes past these are refused as absurd, so that no config can make a reader
// or a model builder allocate without limit (bert-large is 30522/1024/24/16).
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxHidden = 65536;
inline constexpr std::int64_t kMaxLayers = 1024;
inline constexpr std::int64_t kMaxIntermediate = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxPositions = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxTypeVocab = 65536;

// bert-base-cased's hyper-parameters: the defaults above (architecture empty).
BertConfig bert_base_cased();
// A Hugging Face config.json's text; `where` names it in messages. Refuses
// (Error(Input), naming `where`, the key and what was found): malformed JSON,
// not an object, a key of the wrong type, sizes out of range, model_type other
// than "bert"; Error(Unsupported) for hidden_act other than "gelu" or
// position_embedding_type other than "absolute". Keys it does not use are
// ignored; missing keys keep the defaults.
BertConfig parse_bert_config(std::string_view json, const std::string& where);
// Reads and parses the file (at most 16 MiB); a missing or unreadable file is
// an Error(Input) with a hint.
BertConfig read_bert_config(const std::string& path);
// config.json text of `c` with Hugging Face's keys (model_type "bert").
std::string bert_config_json(const BertConfig& c);

// WordPiece tokenizer of a BERT vocabulary with Hugging Face BertTokenizer's
// rules. What this implementation covers, where Python's unicodedata would
// cover all of Unicode:
// - UTF-8 is decoded here. Each byte that does not start a valid sequence (a
//   stray continuation byte, a truncated or overlong sequence, a surrogate, past
//   U+10FFFF) reads as one U+FFFD, which cleaning drops: bad bytes vanish.
// - Cleaning drops U+0000, U+FFFD and control characters: Cc, Cf, surrogates
//   and private use (unassigned code points, which HF drops too, are kept).
//   Whitespace is space, \t, \n, \r and the Zs characters.
// - No Unicode normalisation (NFC or NFKC) comes first: text in decomposed form
//   ("e" + U+0301) keeps its combining mark when not lowercasing.
// - CJK ideographs (the ranges of BERT's original code) become words of their own.
// - With lower_case: capitals of ASCII, Latin-1, Latin Extended-A, Greek and
//   Cyrillic are lowercased (Σ always to σ, never the final ς), accents are
//   stripped from the precomposed letters of Latin-1 and Latin Extended-A (é ->
//   e, while æ ø ł keep their form, as in NFD) and from the Greek letters with
//   tonos or dialytika and the Cyrillic й ё ї ў ѓ ќ ѐ ѝ; combining marks
//   U+0300-036F are dropped. Other scripts keep their accents.
// - Punctuation, split off as one-character words: ASCII 33-47, 58-64, 91-96,
//   123-126 and the P* characters of Latin-1, Greek, Armenian, Hebrew, Arabic,
//   Devanagari, Thai, General Punctuation (U+2010-205E), Supplemental
//   Punctuation (U+2E00-2E5D), CJK Symbols and Punctuation (U+3001-303D), the
//   katakana middle dot and the CJK compatibility, small and fullwidth forms
//   (U+FE10-FF65). Symbols outside ASCII (€, ©, ±) are not punctuation, as in HF.
// - Word pieces: greedy longest-match-first, "##" marking a continuation; a word
//   of more than 100 code points, or with a part no piece matches, is one [UNK].
// - [CLS], [SEP], [PAD], [UNK] and [MASK] written in the text (exactly, case
//   included) are kept whole when the vocabulary has them, even inside a word.
class WordPieceTokenizer {
 public:
  // vocab.txt: one token per line, id = line index (0-based); "\r\n" tolerated,
  // at most 64 MiB (bert-base-cased's is 213 KB). Refuses (Error(Input)) a
  // missing or unreadable file, an empty vocabulary, an empty line, duplicate
  // tokens (naming both lines), more than kMaxVocab tokens, and a vocabulary
  // lacking [CLS], [SEP], [PAD] or [UNK] (naming which; [MASK] is optional).
  static WordPieceTokenizer from_file(const std::string& vocab_path, bool lower_case = false);
  // The same checks on vocab.txt's text in memory; `where` names it in messages.
  static WordPieceTokenizer from_text(std::string_view vocab_txt, const std::string& where, bool lower_case = false);
  // The same checks on a token list (id = index); `where` = "vocabulary".
  static WordPieceTokenizer from_tokens(std::vector<std::string> tokens, bool lower_case = false);

  std::size_t vocab_size() const { return tokens_.size(); }
  bool lower_case() const { return lower_case_; }
  std::int32_t cls_id() const { return cls_; }
  std::int32_t sep_id() const { return sep_; }
  std::int32_t pad_id() const { return pad_; }
  std::int32_t unk_id() const { return unk_; }
  // The token of an id; Error(Input) for an id outside the vocabulary.
  const std::string& token(std::int32_t id) const;
  // The id of a token, or -1.
  std::int32_t find(std::string_view token) const;

  // Word pieces of a text, each with its byte range [begin, end) in `text` (a
  // continuation piece "##xx" maps to its own bytes; an [UNK] to its whole word).
  struct Piece {
    std::int32_t id;
    std::size_t begin, end;
  };
  std::vector<Piece> tokenize(std::string_view text) const;
  // The words BasicTokenizer makes of `text` (after cleaning, CJK spacing,
  // lowercasing and punctuation splitting), before word pieces; for tests.
  std::vector<std::string> basic_tokens(std::string_view text) const;

  // Question answering input: [CLS] question [SEP] context [SEP]; type ids 0 for
  // the first segment ([CLS] and the first [SEP] included), 1 for the context and
  // the last [SEP].
  struct Encoding {
    std::vector<std::int32_t> ids, type_ids;
    // Per position: the byte range in the context, or {npos, npos} outside it.
    std::vector<std::pair<std::size_t, std::size_t>> context_bytes;
    std::int64_t context_begin = 0, context_end = 0;  // positions [begin, end) hold context pieces
    bool truncated = false;                           // context pieces dropped to fit max_len
  };
  // Refuses (Error(Input)) a question or context that is empty or has no tokens
  // (whitespace or control characters only), naming which, and a question too
  // long to leave room for one context piece in max_len (saying how many pieces
  // and the limit); Error(Usage) for max_len below 4. The context is truncated
  // (pieces at its end dropped) to fit max_len, with truncated = true.
  Encoding encode_question_context(std::string_view question, std::string_view context, std::int64_t max_len) const;
  // The context's original text for positions [start, end] (inclusive), from the
  // byte ranges, whitespace between the pieces included; "" when the span is
  // empty or not wholly inside the context.
  static std::string span_text(const Encoding& e, std::string_view context, std::int64_t start, std::int64_t end);

 private:
  WordPieceTokenizer() = default;
  // The checks every constructor shares; ids are indices of `tokens`, messages
  // name line index + 1.
  static WordPieceTokenizer build(std::vector<std::string> tokens, const std::string& where, bool lower_case);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int32_t> ids_;
  // The special tokens the vocabulary has, with their ids: kept whole in text.
  std::vector<std::pair<std::string, std::int32_t>> never_split_;
  std::size_t max_token_bytes_ = 0;  // no longer piece can match: bounds the greedy search
  bool lower_case_ = false;
  std::int32_t cls_ = -1, sep_ = -1, pad_ = -1, unk_ = -1;
};

namespace detail {
// A small text file read whole, refused (Error(Input) naming `what` and the
// path, with `hint`) when missing, unreadable, not a regular file or over
// `limit` bytes. Shared by the two readers above.
std::string read_small_file(const std::string& path, std::uint64_t limit, std::string_view what, std::string_view hint);
}  // namespace detail

}  // namespace roofline::engine::bert
