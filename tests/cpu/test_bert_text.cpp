// BERT's text side: the config.json reader (bert-base-cased's real file, the
// defaults, every kind of bad file) and the WordPiece tokenizer over a small
// vocabulary built here (word pieces, punctuation, CJK, cleaning, lowercasing
// and accents, long words, special tokens, bad UTF-8, byte ranges back into the
// text), the question/context encoding for question answering, and every bad
// vocabulary and input, each with its ErrorKind and a message naming the problem.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/bert_text.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::engine::bert;
using roofline::test::TempDir;
using roofline::test::write_file;

namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// The message of the Error `f` throws, checked for its kind and a hint; "" if it did not throw.
template <typename F>
std::string error_of(F&& f, ErrorKind kind = ErrorKind::Input) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_FALSE(e.hint().empty()) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::vector<std::string> vocab_tokens() {
  return {"[PAD]", "[UNK]",  "[CLS]", "[SEP]", "[MASK]",                                    // 0-4
          "the",   "quick",  "brown", "fox",   "jump",   "##s", "##ed",  "over",   "lazy",  // 5-13
          "dog",   ".",      ",",     "?",     "!",      "un",  "##aff", "##able",          // 14-21
          "hello", "world",  "The",   "who",   "a",      "##a", "'",     "t",      "don",   // 22-30
          "中",    "国",     "人",    "$",     "5",      "é",   "##é",   "Hello",  "“",     // 31-39
          "”",     "quoted", "—",     "¿",     "Qué",    "。",  "5€",    "e",      "##e",   // 40-48
          "[",     "cls",    "]"};                                                          // 49-51
}

const WordPieceTokenizer& cased() {
  static const WordPieceTokenizer t = WordPieceTokenizer::from_tokens(vocab_tokens());
  return t;
}
const WordPieceTokenizer& uncased() {
  static const WordPieceTokenizer t = WordPieceTokenizer::from_tokens(vocab_tokens(), true);
  return t;
}

// The tokens of `text`'s word pieces, space-separated.
std::string pieces(const WordPieceTokenizer& t, std::string_view text) {
  std::string out;
  for (const auto& p : t.tokenize(text)) out += (out.empty() ? "" : " ") + t.token(p.id);
  return out;
}

std::string words(const WordPieceTokenizer& t, std::string_view text) {
  std::string out;
  for (const auto& w : t.basic_tokens(text)) out += (out.empty() ? "" : " ") + w;
  return out;
}

// bert-base-cased's config.json as Hugging Face publishes it, architecture set for question answering.
const char* const kBaseCasedJson = R"({
  "architectures": ["BertForQuestionAnswering"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 28996
})";

std::string config_error(const std::string& json, ErrorKind kind = ErrorKind::Input) {
  const std::string m = error_of([&] { parse_bert_config(json, "bert/config.json"); }, kind);
  EXPECT_HAS(m, "bert/config.json: ");
  return m;
}

}  // namespace

// ---- config ---------------------------------------------------------------------------------------------------------

TEST(BertConfig, ReadsBertBaseCasedFile) {
  TempDir dir;
  write_file(dir.file("config.json"), kBaseCasedJson);
  const BertConfig c = read_bert_config(dir.file("config.json"));
  EXPECT_EQ(c.vocab_size, 28996);
  EXPECT_EQ(c.hidden, 768);
  EXPECT_EQ(c.layers, 12);
  EXPECT_EQ(c.heads, 12);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.intermediate, 3072);
  EXPECT_EQ(c.max_positions, 512);
  EXPECT_EQ(c.type_vocab, 2);
  EXPECT_FLOAT_EQ(c.layer_norm_eps, 1e-12f);
  EXPECT_FLOAT_EQ(c.hidden_dropout, 0.1f);
  EXPECT_FLOAT_EQ(c.attention_dropout, 0.1f);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_EQ(c.architecture, "BertForQuestionAnswering");
}

TEST(BertConfig, DefaultsAreBertBaseCasedAndRoundTrip) {
  const BertConfig d = bert_base_cased();
  EXPECT_NO_THROW(d.validate());
  const BertConfig e = parse_bert_config("{}", "empty.json");  // every key missing: the defaults
  EXPECT_EQ(e.vocab_size, d.vocab_size);
  EXPECT_EQ(e.hidden, d.hidden);
  EXPECT_EQ(e.intermediate, d.intermediate);
  EXPECT_EQ(e.architecture, "");
  BertConfig small;
  small.vocab_size = 100, small.hidden = 64, small.layers = 2, small.heads = 4, small.intermediate = 128;
  small.max_positions = 32, small.type_vocab = 1, small.layer_norm_eps = 1e-5f, small.pad_token_id = -1;
  small.architecture = "BertModel";
  const BertConfig r = parse_bert_config(bert_config_json(small), "written");
  EXPECT_EQ(r.vocab_size, 100);
  EXPECT_EQ(r.hidden, 64);
  EXPECT_EQ(r.layers, 2);
  EXPECT_EQ(r.heads, 4);
  EXPECT_EQ(r.intermediate, 128);
  EXPECT_EQ(r.max_positions, 32);
  EXPECT_EQ(r.type_vocab, 1);
  EXPECT_FLOAT_EQ(r.layer_norm_eps, 1e-5f);
  EXPECT_EQ(r.pad_token_id, -1);
  EXPECT_EQ(r.architecture, "BertModel");
}

TEST(BertConfig, RefusesMalformedFiles) {
  EXPECT_HAS(config_error("{\"hidden_size\": 768,"), "not valid JSON");
  EXPECT_HAS(config_error(""), "not valid JSON");
  EXPECT_HAS(config_error("[1, 2]"), "not a JSON object");
  EXPECT_HAS(config_error("\"bert\""), "not a JSON object");
  std::string m = config_error(R"({"hidden_size": "768"})");
  EXPECT_HAS(m, "\"hidden_size\"");
  EXPECT_HAS(m, "a string");
  EXPECT_HAS(config_error(R"({"num_hidden_layers": 12.5})"), "a floating-point number");
  EXPECT_HAS(config_error(R"({"num_hidden_layers": true})"), "a boolean");
  EXPECT_HAS(config_error(R"({"layer_norm_eps": "1e-12"})"), "\"layer_norm_eps\"");
  EXPECT_HAS(config_error(R"({"hidden_act": 1})"), "\"hidden_act\"");
  EXPECT_HAS(config_error(R"({"architectures": "BertModel"})"), "\"architectures\"");
  EXPECT_HAS(config_error(R"({"architectures": [1]})"), "an array of strings");
  EXPECT_HAS(config_error(R"({"model_type": 3})"), "\"model_type\"");
}

TEST(BertConfig, RefusesOtherArchitecturesAndBadSizes) {
  EXPECT_HAS(config_error(R"({"model_type": "gpt2", "n_embd": 768})"),
             "a checkpoint of another architecture: model_type is 'gpt2'");
  std::string m = config_error(R"({"hidden_size": 770, "num_attention_heads": 12})");
  EXPECT_HAS(m, "\"hidden_size\" 770 is not divisible by \"num_attention_heads\" 12");
  m = config_error(R"({"vocab_size": 33554432})");
  EXPECT_HAS(m, "\"vocab_size\" is 33554432");
  EXPECT_HAS(m, "limit");
  EXPECT_HAS(config_error(R"({"hidden_size": 131072, "num_attention_heads": 1})"), "\"hidden_size\" is 131072");
  EXPECT_HAS(config_error(R"({"num_hidden_layers": 100000})"), "limit of 1024");
  EXPECT_HAS(config_error(R"({"num_hidden_layers": 0})"), "\"num_hidden_layers\" is 0; it must be a positive");
  EXPECT_HAS(config_error(R"({"intermediate_size": -3072})"), "\"intermediate_size\" is -3072");
  EXPECT_HAS(config_error(R"({"vocab_size": 18446744073709551615})"), "\"vocab_size\"");  // past int64
  EXPECT_HAS(config_error(R"({"num_attention_heads": 0})"), "\"num_attention_heads\" is 0");
  EXPECT_HAS(config_error(R"({"layer_norm_eps": 0})"), "\"layer_norm_eps\"");
  EXPECT_HAS(config_error(R"({"layer_norm_eps": 1e300})"), "\"layer_norm_eps\" is inf");
  EXPECT_HAS(config_error(R"({"hidden_dropout_prob": 1.5})"), "\"hidden_dropout_prob\" is 1.5");
  EXPECT_HAS(config_error(R"({"vocab_size": 100, "pad_token_id": 100})"), "\"pad_token_id\" is 100");
  EXPECT_EQ(parse_bert_config(R"({"pad_token_id": null})", "x").pad_token_id, -1);
}

TEST(BertConfig, RefusesWhatTheEngineCannotRun) {
  std::string m = config_error(R"({"hidden_act": "relu"})", ErrorKind::Unsupported);
  EXPECT_HAS(m, "'relu' is not supported");
  EXPECT_HAS(config_error(R"({"hidden_act": "gelu_new"})", ErrorKind::Unsupported), "'gelu_new'");
  EXPECT_HAS(config_error(R"({"position_embedding_type": "relative_key"})", ErrorKind::Unsupported), "'relative_key'");
  // validate() alone names its subject.
  BertConfig c;
  c.heads = 5;
  m = error_of([&] { c.validate(); });
  EXPECT_HAS(m, "BERT config: \"hidden_size\" 768 is not divisible by \"num_attention_heads\" 5");
}

TEST(BertConfig, MissingFileIsAnInputErrorWithAHint) {
  TempDir dir;
  std::string m = error_of([&] { read_bert_config(dir.file("nope/config.json")); });
  EXPECT_HAS(m, dir.file("nope/config.json"));
  EXPECT_HAS(m, "cannot read the BERT config");
  EXPECT_HAS(error_of([&] { read_bert_config(dir.path()); }), "not a regular file");
  write_file(dir.file("bad.json"), "{\"model_type\": \"gpt2\"}");
  EXPECT_HAS(error_of([&] { read_bert_config(dir.file("bad.json")); }), dir.file("bad.json") + ": a checkpoint");
}

// ---- tokenizer ------------------------------------------------------------------------------------------------------

TEST(WordPiece, VocabularyIdsAndSpecialTokens) {
  const auto& t = cased();
  EXPECT_EQ(t.vocab_size(), vocab_tokens().size());
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 1);
  EXPECT_EQ(t.cls_id(), 2);
  EXPECT_EQ(t.sep_id(), 3);
  EXPECT_EQ(t.token(20), "##aff");
  EXPECT_EQ(t.find("##able"), 21);
  EXPECT_EQ(t.find("nope"), -1);
  EXPECT_HAS(error_of([&] { t.token(999); }), "token id 999");
  EXPECT_HAS(error_of([&] { t.token(-1); }), "token id -1");
}

TEST(WordPiece, GreedyLongestMatchFirst) {
  const auto& t = cased();
  EXPECT_EQ(pieces(t, "unaffable"), "un ##aff ##able");
  EXPECT_EQ(pieces(t, "the quick brown fox jumps over the lazy dog"), "the quick brown fox jump ##s over the lazy dog");
  EXPECT_EQ(pieces(t, "jumped"), "jump ##ed");
  EXPECT_EQ(pieces(t, "foxy"), "[UNK]");  // "##y" is not in the vocabulary: the whole word is unknown
  EXPECT_EQ(pieces(t, "foxes"), "fox ##e ##s");
  EXPECT_EQ(pieces(t, "The"), "The");  // cased: "The" and "the" are two tokens
  EXPECT_EQ(pieces(t, ""), "");
  EXPECT_EQ(pieces(t, " \t\n "), "");
}

TEST(WordPiece, SplitsPunctuation) {
  const auto& t = cased();
  EXPECT_EQ(words(t, "Hello, world!"), "Hello , world !");
  EXPECT_EQ(pieces(t, "Hello, world!"), "Hello , world !");
  EXPECT_EQ(words(t, "don't"), "don ' t");
  EXPECT_EQ(words(t, "$5"), "$ 5");  // ASCII symbols count as punctuation, as in Hugging Face
  EXPECT_EQ(words(t, "5€"), "5€");   // a Unicode currency symbol does not
  EXPECT_EQ(words(t, "“quoted”"), "“ quoted ”");
  EXPECT_EQ(words(t, "a—b"), "a — b");
  EXPECT_EQ(pieces(t, "¿Qué?"), "¿ Qué ?");
  EXPECT_EQ(words(t, "(a)[b]{c}"), "( a ) [ b ] { c }");
}

TEST(WordPiece, SpacesOutCjkIdeographs) {
  const auto& t = cased();
  EXPECT_EQ(words(t, "中国人"), "中 国 人");
  EXPECT_EQ(words(t, "ab中cd"), "ab 中 cd");
  EXPECT_EQ(pieces(t, "中国人。"), "中 国 人 。");
  EXPECT_EQ(words(t, "カタカナ"), "カタカナ");  // Katakana is not in the CJK ideograph ranges
}

TEST(WordPiece, RemovesControlCharactersAndBadUtf8) {
  const auto& t = cased();
  EXPECT_EQ(words(t, "hel\x01lo"), "hello");
  EXPECT_EQ(words(t, std::string("hel\0lo", 6)), "hello");
  EXPECT_EQ(words(t, "hel\u200blo"), "hello");          // zero-width space (Cf)
  EXPECT_EQ(words(t, "hel\ufeffl\u00adlo"), "helllo");  // BOM, soft hyphen
  EXPECT_EQ(words(t, "hel\ufffdlo"), "hello");
  EXPECT_EQ(words(t, "a\u00a0b\u3000c\u2009d\re"), "a b c d e");  // Zs and \r are whitespace
  // Invalid UTF-8: each bad byte is dropped.
  const std::string ff = "ab\xff", overlong = "ab\xc0\xaf", surrogate = "ab\xed\xa0\x80";
  EXPECT_EQ(words(t, ff + "cd"), "abcd");
  EXPECT_EQ(words(t, overlong + "cd"), "abcd");  // an overlong '/'
  EXPECT_EQ(words(t, surrogate + "cd"), "abcd");
  EXPECT_EQ(words(t, "ab\xe4\xb8"), "ab");  // truncated 中
  EXPECT_EQ(words(t, "\x80\x80\x80"), "");
  const std::string bad = "x\xf4\x90\x80\x80 \xc3";
  for (const auto& p : t.tokenize(bad)) EXPECT_LE(p.end, bad.size());
}

TEST(WordPiece, LowerCaseStripsAccents) {
  EXPECT_EQ(words(cased(), "Héllo"), "Héllo");  // a cased model keeps case and accents
  EXPECT_EQ(words(uncased(), "Héllo"), "hello");
  EXPECT_EQ(words(uncased(), "He\u0301llo"), "hello");  // a combining accent is dropped
  EXPECT_EQ(words(uncased(), "ÀÉÎÕÜÇÑ ŁŠŽĚ İ"), "aeioucn łsze i");
  EXPECT_EQ(words(uncased(), "ÆØß"), "æøß");  // no decomposition: kept
  EXPECT_EQ(words(uncased(), "ΆΘΗΝΑ Йод"), "αθηνα иод");
  EXPECT_EQ(pieces(uncased(), "HELLO WORLD"), "hello world");
  // The pieces of a lowercased word still cover its original bytes, the dropped accent included.
  const std::string text = "He\u0301llo";
  const auto p = uncased().tokenize(text);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].begin, 0u);
  EXPECT_EQ(p[0].end, text.size());
}

TEST(WordPiece, LongWordsAreUnknown) {
  const auto& t = cased();
  const auto p100 = t.tokenize(std::string(100, 'a'));
  ASSERT_EQ(p100.size(), 100u);  // a ##a ##a ...
  EXPECT_EQ(t.token(p100[0].id), "a");
  EXPECT_EQ(t.token(p100[99].id), "##a");
  const auto p101 = t.tokenize("x " + std::string(101, 'a') + " a");
  ASSERT_EQ(p101.size(), 3u);
  EXPECT_EQ(p101[1].id, t.unk_id());
  EXPECT_EQ(p101[1].begin, 2u);
  EXPECT_EQ(p101[1].end, 103u);
  // The limit counts code points, not bytes: 100 é (200 bytes) are still pieces.
  std::string e100;
  for (int i = 0; i < 100; ++i) e100 += "é";
  EXPECT_EQ(t.tokenize(e100).size(), 100u);
  EXPECT_EQ(pieces(t, e100 + "é"), "[UNK]");
}

TEST(WordPiece, KeepsSpecialTokensWhole) {
  const auto& t = cased();
  EXPECT_EQ(pieces(t, "[CLS] hello [SEP]"), "[CLS] hello [SEP]");
  EXPECT_EQ(pieces(t, "hello[SEP]world"), "hello [SEP] world");
  EXPECT_EQ(pieces(t, "the [MASK] dog"), "the [MASK] dog");
  EXPECT_EQ(pieces(t, "[cls]"), "[ cls ]");  // case matters, as in Hugging Face
  EXPECT_EQ(pieces(uncased(), "[PAD] HELLO"), "[PAD] hello");
  const auto p = t.tokenize("a [UNK]");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].begin, 2u);
  EXPECT_EQ(p[1].end, 7u);
}

TEST(WordPiece, ByteRangesMapBackToTheText) {
  const auto& t = cased();
  const std::string text = "  unaffable, 中国 jumped";
  const auto p = t.tokenize(text);
  ASSERT_EQ(p.size(), 8u);
  const char* expect[] = {"un", "aff", "able", ",", "中", "国", "jump", "ed"};
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(text.substr(p[i].begin, p[i].end - p[i].begin), expect[i]);
}

TEST(WordPiece, EncodesQuestionAndContext) {
  const auto& t = cased();
  const std::string context = "The quick brown fox jumped over the lazy dog.";
  const auto e = t.encode_question_context("who jumped?", context, 64);
  // [CLS] who jump ##ed ? [SEP] The quick brown fox jump ##ed over the lazy dog . [SEP]
  const std::vector<std::int32_t> ids = {2, 25, 9, 11, 17, 3, 24, 6, 7, 8, 9, 11, 12, 5, 13, 14, 15, 3};
  EXPECT_EQ(e.ids, ids);
  std::vector<std::int32_t> types(18, 1);
  std::fill(types.begin(), types.begin() + 6, 0);
  EXPECT_EQ(e.type_ids, types);
  EXPECT_EQ(e.context_begin, 6);
  EXPECT_EQ(e.context_end, 17);
  EXPECT_FALSE(e.truncated);
  ASSERT_EQ(e.context_bytes.size(), 18u);
  EXPECT_EQ(e.context_bytes[0].first, std::string::npos);
  EXPECT_EQ(e.context_bytes[17].second, std::string::npos);
  EXPECT_EQ(e.context_bytes[6], (std::pair<std::size_t, std::size_t>{0, 3}));
  // Spans back to the context's text: a multi-piece word whole, several words with their spaces.
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 10, 11), "jumped");
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 9, 11), "fox jumped");
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 6, 16), context);
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 11, 11), "ed");
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 5, 7), "");    // starts on [SEP]
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 16, 17), "");  // ends on the last [SEP]
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, 8, 7), "");    // backwards
  EXPECT_EQ(WordPieceTokenizer::span_text(e, context, -1, 100), "");
  EXPECT_EQ(WordPieceTokenizer::span_text(e, "short", 6, 16), "");  // not this encoding's context
}

TEST(WordPiece, TruncatesTheContext) {
  const auto& t = cased();
  const auto e = t.encode_question_context("who jumped?", "The quick brown fox jumped over the lazy dog.", 10);
  EXPECT_TRUE(e.truncated);
  ASSERT_EQ(e.ids.size(), 10u);
  EXPECT_EQ(e.context_begin, 6);
  EXPECT_EQ(e.context_end, 9);  // The quick brown
  EXPECT_EQ(e.ids[8], 7);
  EXPECT_EQ(e.ids[9], t.sep_id());
  EXPECT_EQ(e.type_ids[9], 1);
  // Exactly enough room: not truncated.
  EXPECT_FALSE(t.encode_question_context("who", "the dog", 6).truncated);
  EXPECT_TRUE(t.encode_question_context("who", "the dog", 5).truncated);
}

TEST(WordPiece, RefusesBadQuestionsAndContexts) {
  const auto& t = cased();
  EXPECT_HAS(error_of([&] { t.encode_question_context("", "the dog", 64); }), "the question is empty");
  EXPECT_HAS(error_of([&] { t.encode_question_context(" \t\n", "the dog", 64); }), "the question has no words");
  EXPECT_HAS(error_of([&] { t.encode_question_context("who", "", 64); }), "the context is empty");
  EXPECT_HAS(error_of([&] { t.encode_question_context("who", "\x01\x02  ", 64); }), "the context has no words");
  std::string m = error_of([&] { t.encode_question_context("who jumped?", "the dog", 7); });
  EXPECT_HAS(m, "the question is 4 word pieces");
  EXPECT_HAS(m, "max_len 7");
  EXPECT_HAS(error_of([&] { t.encode_question_context("who", "the dog", 3); }, ErrorKind::Usage), "max_len 3");
}

TEST(WordPiece, ReadsVocabFiles) {
  TempDir dir;
  std::string text;
  for (const auto& tok : vocab_tokens()) text += tok + "\r\n";  // Windows line ends
  write_file(dir.file("vocab.txt"), text);
  const auto t = WordPieceTokenizer::from_file(dir.file("vocab.txt"));
  EXPECT_EQ(t.vocab_size(), vocab_tokens().size());  // the last line end adds no token
  EXPECT_EQ(pieces(t, "unaffable"), "un ##aff ##able");
  write_file(dir.file("nolast.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]");
  EXPECT_EQ(WordPieceTokenizer::from_file(dir.file("nolast.txt")).sep_id(), 3);
}

TEST(WordPiece, RefusesBadVocabularies) {
  TempDir dir;
  std::string m = error_of([&] { WordPieceTokenizer::from_file(dir.file("vocab.txt")); });
  EXPECT_HAS(m, dir.file("vocab.txt") + ": cannot read the BERT vocabulary");
  auto tokens = vocab_tokens();
  tokens.push_back("quick");
  m = error_of([&] { WordPieceTokenizer::from_tokens(tokens); });
  EXPECT_HAS(m, "vocabulary: duplicate token 'quick' on lines 7 and 53");
  tokens = vocab_tokens();
  tokens.erase(tokens.begin() + 3);
  EXPECT_HAS(error_of([&] { WordPieceTokenizer::from_tokens(tokens); }), "the vocabulary lacks [SEP]");
  m = error_of([&] { WordPieceTokenizer::from_tokens({"a", "b"}); });
  EXPECT_HAS(m, "lacks [CLS] and [SEP] and [PAD] and [UNK]");
  EXPECT_HAS(error_of([&] { WordPieceTokenizer::from_tokens({}); }), "the vocabulary is empty");
  write_file(dir.file("empty.txt"), "");
  EXPECT_HAS(error_of([&] { WordPieceTokenizer::from_file(dir.file("empty.txt")); }),
             "empty.txt: the vocabulary is empty");
  write_file(dir.file("gap.txt"), "[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n");
  EXPECT_HAS(error_of([&] { WordPieceTokenizer::from_file(dir.file("gap.txt")); }), "gap.txt: line 3 (id 2) is empty");
  // Without [MASK] the vocabulary is still usable for question answering.
  EXPECT_NO_THROW(WordPieceTokenizer::from_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n", "v"));
}
