// BERT's WordPiece tokenizer with Hugging Face BertTokenizer's rules: special
// tokens written in the text are split out first (HF's added-token trie), then
// BasicTokenizer (clean, space out CJK ideographs, split on whitespace,
// lowercase and strip accents when asked, split off punctuation), then
// WordpieceTokenizer (greedy longest-match-first, "##" continuations, [UNK] for a
// word past 100 code points or with no match). The Unicode properties HF takes
// from Python's unicodedata are tables here, covering what the header lists;
// every character keeps the byte range it came from, so that an answer span of
// word pieces maps back to the original text.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bert_text.hpp"

namespace roofline::engine::bert {

namespace {

constexpr std::size_t kNpos = std::string::npos;
constexpr std::size_t kMaxWordChars = 100;           // HF's max_input_chars_per_word
constexpr std::uint64_t kMaxVocabBytes = 64u << 20;  // vocab.txt of bert-base-cased: 213 KB
constexpr const char* kSpecials[] = {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"};

// ---- UTF-8 --------------------------------------------------------------------------------------------------------

// A code point and the bytes [begin, end) of the original text it came from.
struct Char {
  char32_t cp;
  std::size_t begin, end;
};

constexpr char32_t kReplacement = 0xFFFD;

// The character at byte `i` of `s` (i < s.size()), strict UTF-8: no overlongs,
// surrogates or code points past U+10FFFF. A byte that does not start a valid
// sequence is one U+FFFD, which cleaning then drops, as it drops the U+FFFD
// that Python's decode(errors="replace") would have produced.
Char decode_at(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned b0 = byte(i);
  std::size_t len = 0;
  char32_t cp = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the valid range of the second byte
  if (b0 < 0x80) {
    len = 1, cp = b0;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  }
  bool ok = len > 0 && i + len <= s.size();
  for (std::size_t k = 1; ok && k < len; ++k) {
    const unsigned b = byte(i + k);
    ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    cp = (cp << 6) | (b & 0x3F);
  }
  if (!ok) len = 1, cp = kReplacement;
  return {cp, i, i + len};
}

void append_utf8(std::string& s, char32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// ---- Unicode properties (BasicTokenizer's _is_control, _is_whitespace, _is_punctuation, _is_chinese_char) --------

struct Range {
  char32_t lo, hi;  // inclusive
};

template <std::size_t N>
bool in(const std::array<Range, N>& table, char32_t cp) {
  // Sorted, disjoint ranges: the first whose hi is >= cp is the only candidate.
  auto it = std::lower_bound(table.begin(), table.end(), cp, [](const Range& r, char32_t c) { return r.hi < c; });
  return it != table.end() && it->lo <= cp;
}

// Cc, Cf, Cs and Co (HF drops every category starting with "C" but \t \n \r;
// unassigned code points, Cn, are not listed here).
constexpr std::array<Range, 24> kControl{{
    {0x00, 0x08},       {0x0B, 0x0C},       {0x0E, 0x1F},       {0x7F, 0x9F},        {0xAD, 0xAD},
    {0x600, 0x605},     {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},      {0x890, 0x891},
    {0x8E2, 0x8E2},     {0x180E, 0x180E},   {0x200B, 0x200F},   {0x202A, 0x202E},    {0x2060, 0x206F},
    {0xD800, 0xF8FF},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},  {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0x10FFFF},
}};

bool is_control(char32_t cp) {
  if (cp < 0x80) return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F;
  // U+E0001-E007F are tags (Cf), U+F0000 on private use (Co); what lies between is unassigned.
  if (cp > 0xE007F && cp < 0xF0000) return false;
  return in(kControl, cp);
}

bool is_whitespace(char32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// The CJK Unified Ideographs blocks BERT's original code lists (not Hangul, Hiragana or Katakana).
constexpr std::array<Range, 8> kCjk{{
    {0x3400, 0x4DBF},
    {0x4E00, 0x9FFF},
    {0xF900, 0xFAFF},
    {0x20000, 0x2A6DF},
    {0x2A700, 0x2B73F},
    {0x2B740, 0x2B81F},
    {0x2B820, 0x2CEAF},
    {0x2F800, 0x2FA1F},
}};

// ASCII's non-alphanumeric printables (HF counts $ + < = > ^ ` | ~ too) and the
// P* characters of the blocks the header lists.
constexpr std::array<Range, 50> kPunct{{
    {0x21, 0x2F},     {0x3A, 0x40},     {0x5B, 0x60},     {0x7B, 0x7E},     {0xA1, 0xA1},     {0xA7, 0xA7},
    {0xAB, 0xAB},     {0xB6, 0xB7},     {0xBB, 0xBB},     {0xBF, 0xBF},     {0x37E, 0x37E},   {0x387, 0x387},
    {0x55A, 0x55F},   {0x589, 0x58A},   {0x5BE, 0x5BE},   {0x5C0, 0x5C0},   {0x5C3, 0x5C3},   {0x5C6, 0x5C6},
    {0x5F3, 0x5F4},   {0x609, 0x60A},   {0x60C, 0x60D},   {0x61B, 0x61B},   {0x61D, 0x61F},   {0x66A, 0x66D},
    {0x6D4, 0x6D4},   {0x964, 0x965},   {0x970, 0x970},   {0xE4F, 0xE4F},   {0xE5A, 0xE5B},   {0x2010, 0x2027},
    {0x2030, 0x2043}, {0x2045, 0x2051}, {0x2053, 0x205E}, {0x2E00, 0x2E2E}, {0x2E30, 0x2E4F}, {0x2E52, 0x2E5D},
    {0x3001, 0x3003}, {0x3008, 0x3011}, {0x3014, 0x301F}, {0x3030, 0x3030}, {0x303D, 0x303D}, {0x30FB, 0x30FB},
    {0xFE10, 0xFE19}, {0xFE30, 0xFE52}, {0xFE54, 0xFE61}, {0xFE63, 0xFE63}, {0xFE68, 0xFE68}, {0xFE6A, 0xFE6B},
    {0xFF01, 0xFF0F}, {0xFF1A, 0xFF65},
}};

bool is_punctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  if (!in(kPunct, cp)) return false;
  // The two ranges of fullwidth forms hold symbols and letters between their punctuation.
  if (cp >= 0xFF01 && cp <= 0xFF0F) return cp != 0xFF04 && cp != 0xFF0B;
  if (cp >= 0xFF1A && cp <= 0xFF65)
    return cp <= 0xFF1B || cp == 0xFF1F || cp == 0xFF20 || (cp >= 0xFF3B && cp <= 0xFF3D) || cp == 0xFF3F ||
           cp == 0xFF5B || cp == 0xFF5D || cp >= 0xFF5F;
  return true;
}

// Python's str.lower() for the capitals of ASCII, Latin-1, Latin Extended-A,
// Greek and Cyrillic (Σ always becomes σ: Python's final ς is not modelled).
char32_t to_lower(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0xC0) return cp;
  if (cp <= 0xDE) return cp == 0xD7 ? cp : cp + 32;
  if (cp == 0x130) return 'i';  // İ lowers to i + U+0307, whose dot accent stripping drops
  if (cp >= 0x100 && cp <= 0x137) return cp | 1;
  if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return cp % 2 == 1 ? cp + 1 : cp;
  if (cp >= 0x14A && cp <= 0x177) return cp | 1;
  if (cp == 0x178) return 0xFF;
  if (cp == 0x386) return 0x3AC;
  if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
  if (cp == 0x38C) return 0x3CC;
  if (cp == 0x38E || cp == 0x38F) return cp + 63;
  if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  return cp;
}

// The base letter of a precomposed letter (what NFD then dropping Mn leaves),
// 0 for a combining mark U+0300-036F (dropped), else the character itself.
// '.' in the tables: no canonical decomposition (æ, ø, đ, ł, œ, ...).
constexpr char kLatin1Base[] = "AAAAAA.CEEEEIIII.NOOOOO..UUUUY..aaaaaa.ceeeeiiii.nooooo..uuuuy.y";  // U+00C0-00FF
constexpr char kLatinABase[] =                                                                      // U+0100-017F
    "AaAaAaCcCcCcCcDd..EeEeEeEeEeGgGgGgGgHh..IiIiIiIiI...JjKk.LlLlLl....NnNnNn...OoOoOo..RrRrRrSsSsSsSsTtTt.."
    "UuUuUuUuUuUuWwYyYZzZzZz.";
static_assert(sizeof kLatin1Base == 64 + 1 && sizeof kLatinABase == 128 + 1);

char32_t strip_accent(char32_t cp) {
  if (cp >= 0x300 && cp <= 0x36F) return 0;
  if (cp >= 0xC0 && cp <= 0xFF) return kLatin1Base[cp - 0xC0] == '.' ? cp : kLatin1Base[cp - 0xC0];
  if (cp >= 0x100 && cp <= 0x17F) return kLatinABase[cp - 0x100] == '.' ? cp : kLatinABase[cp - 0x100];
  switch (cp) {  // Greek with tonos or dialytika, Cyrillic with breve, diaeresis or acute
    case 0x3AC:
      return 0x3B1;
    case 0x3AD:
      return 0x3B5;
    case 0x3AE:
      return 0x3B7;
    case 0x3AF:
    case 0x3CA:
    case 0x390:
      return 0x3B9;
    case 0x3CC:
      return 0x3BF;
    case 0x3CD:
    case 0x3CB:
    case 0x3B0:
      return 0x3C5;
    case 0x3CE:
      return 0x3C9;
    case 0x439:
    case 0x45D:
      return 0x438;
    case 0x450:
    case 0x451:
      return 0x435;
    case 0x453:
      return 0x433;
    case 0x457:
      return 0x456;
    case 0x45C:
      return 0x43A;
    case 0x45E:
      return 0x443;
    default:
      return cp;
  }
}

// ---- BasicTokenizer -----------------------------------------------------------------------------------------------

// BasicTokenizer over `text`, special tokens split out first: calls
// word(chars) for each word, its (normalised) characters with their original
// bytes, and special(id, begin, end) for each special token kept whole.
// `specials` holds the special tokens the vocabulary has, with their ids. One
// buffer serves every word: no allocation per word.
template <typename OnWord, typename OnSpecial>
void basic_words(std::string_view text, const std::vector<std::pair<std::string, std::int32_t>>& specials,
                 bool lower_case, OnWord&& word, OnSpecial&& special) {
  std::vector<Char> cur;
  auto flush = [&] {
    if (!cur.empty()) word(cur);
    cur.clear();
  };
  auto alone = [&](const Char& c) {  // a character that is a word of its own
    flush();
    cur.push_back(c);
    flush();
  };
  for (std::size_t at = 0; at < text.size();) {
    Char c = decode_at(text, at);
    at = c.end;
    if (c.cp == '[') {
      auto it = std::find_if(specials.begin(), specials.end(),
                             [&](const auto& s) { return text.substr(c.begin, s.first.size()) == s.first; });
      if (it != specials.end()) {
        flush();
        at = c.begin + it->first.size();
        special(it->second, c.begin, at);
        continue;
      }
    }
    if (c.cp == 0 || c.cp == kReplacement || is_control(c.cp)) continue;
    if (is_whitespace(c.cp)) {
      flush();
      continue;
    }
    if (in(kCjk, c.cp)) {
      alone(c);
      continue;
    }
    if (lower_case) {
      c.cp = strip_accent(to_lower(c.cp));
      if (c.cp == 0) {
        // A dropped combining mark: its bytes join the character it marks, so
        // that the word's byte range still covers the whole original word.
        if (!cur.empty()) cur.back().end = c.end;
        continue;
      }
    }
    if (is_punctuation(c.cp)) {
      alone(c);
      continue;
    }
    cur.push_back(c);
  }
  flush();
}

// ---- WordpieceTokenizer -------------------------------------------------------------------------------------------

// The buffers word_pieces reuses from word to word.
struct Scratch {
  std::string word, key;
  std::vector<std::size_t> cuts;  // byte offset in `word` where each character starts, then its end
  std::vector<std::array<std::size_t, 3>> pieces;
};

// Greedy longest-match-first pieces of one word, as {id, first char, last char
// + 1} in scratch.pieces; false when some part of the word matches no piece.
bool word_pieces(const std::vector<Char>& chars, const std::unordered_map<std::string, std::int32_t>& ids,
                 std::size_t max_token_bytes, Scratch& scratch) {
  std::string& word = scratch.word;
  std::string& key = scratch.key;
  std::vector<std::size_t>& cuts = scratch.cuts;
  auto& out = scratch.pieces;
  word.clear(), cuts.clear(), out.clear();
  for (const Char& c : chars) {
    cuts.push_back(word.size());
    append_utf8(word, c.cp);
  }
  cuts.push_back(word.size());
  const std::size_t n = chars.size();
  for (std::size_t start = 0; start < n;) {
    const std::size_t prefix = start > 0 ? 2 : 0;
    std::size_t end = n;
    std::int32_t found = -1;
    for (; end > start; --end) {
      // Pieces longer than the vocabulary's longest token cannot match: skip their lookups.
      if (cuts[end] - cuts[start] + prefix > max_token_bytes) continue;
      key.assign(prefix > 0 ? "##" : "");
      key.append(word, cuts[start], cuts[end] - cuts[start]);
      if (auto it = ids.find(key); it != ids.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) return false;
    out.push_back({static_cast<std::size_t>(found), start, end});
    start = end;
  }
  return true;
}

std::string quoted(std::string_view token) { return "'" + shorten(printable(token), 60) + "'"; }

}  // namespace

// ---- vocabulary -----------------------------------------------------------------------------------------------------

WordPieceTokenizer WordPieceTokenizer::build(std::vector<std::string> tokens, const std::string& where,
                                             bool lower_case) {
  const char* hint =
      "vocab.txt holds one token per line, its id the line's index from 0 (bert-base-cased's has 28996 "
      "lines, [PAD] [UNK] [CLS] [SEP] [MASK] among them)";
  if (tokens.empty()) throw Error(ErrorKind::Input, fmt::format("{}: the vocabulary is empty", where), hint);
  if (tokens.size() > static_cast<std::size_t>(kMaxVocab))
    throw Error(ErrorKind::Input,
                fmt::format("{}: the vocabulary has more than {} tokens, past this reader's limit", where, kMaxVocab),
                hint);
  WordPieceTokenizer t;
  t.lower_case_ = lower_case;
  t.ids_.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].empty())
      throw Error(ErrorKind::Input, fmt::format("{}: line {} (id {}) is empty", where, i + 1, i), hint);
    auto [it, fresh] = t.ids_.emplace(tokens[i], static_cast<std::int32_t>(i));
    if (!fresh)
      throw Error(ErrorKind::Input,
                  fmt::format("{}: duplicate token {} on lines {} and {} (ids {} and {})", where, quoted(tokens[i]),
                              it->second + 1, i + 1, it->second, i),
                  "every token must appear once: a damaged or merged vocab.txt? take the checkpoint's own file");
    t.max_token_bytes_ = std::max(t.max_token_bytes_, tokens[i].size());
  }
  std::vector<std::string> missing;
  for (const char* s : kSpecials) {
    auto it = t.ids_.find(s);
    if (it != t.ids_.end())
      t.never_split_.emplace_back(s, it->second);
    else if (std::string_view(s) != "[MASK]")  // [MASK] only matters for pre-training
      missing.push_back(s);
  }
  if (!missing.empty())
    throw Error(ErrorKind::Input,
                fmt::format("{}: the vocabulary lacks {} (BERT's input needs [CLS], [SEP], [PAD] and [UNK])", where,
                            join(missing, " and ")),
                "use the vocab.txt of the checkpoint: a BERT vocabulary holds [PAD] [UNK] [CLS] [SEP] [MASK]");
  t.cls_ = t.ids_.at("[CLS]");
  t.sep_ = t.ids_.at("[SEP]");
  t.pad_ = t.ids_.at("[PAD]");
  t.unk_ = t.ids_.at("[UNK]");
  t.tokens_ = std::move(tokens);
  return t;
}

WordPieceTokenizer WordPieceTokenizer::from_tokens(std::vector<std::string> tokens, bool lower_case) {
  return build(std::move(tokens), "vocabulary", lower_case);
}

WordPieceTokenizer WordPieceTokenizer::from_text(std::string_view text, const std::string& where, bool lower_case) {
  std::vector<std::string> tokens;
  std::size_t at = 0;
  while (at < text.size()) {
    // Stop one past the limit: enough for build() to refuse, no more allocated.
    if (tokens.size() > static_cast<std::size_t>(kMaxVocab)) break;
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    tokens.emplace_back(line);
    at = nl + 1;
  }
  return build(std::move(tokens), where, lower_case);
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_path, bool lower_case) {
  const std::string text = detail::read_small_file(
      vocab_path, kMaxVocabBytes, "BERT vocabulary",
      "pass the checkpoint's vocab.txt (Hugging Face bert-base-cased has one beside its config.json)");
  return from_text(text, vocab_path, lower_case);
}

const std::string& WordPieceTokenizer::token(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size())
    throw Error(ErrorKind::Input, fmt::format("token id {} is outside the vocabulary of {} tokens", id, tokens_.size()),
                "ids come from this tokenizer's vocab.txt, 0 to its line count - 1");
  return tokens_[static_cast<std::size_t>(id)];
}

std::int32_t WordPieceTokenizer::find(std::string_view tok) const {
  auto it = ids_.find(std::string(tok));
  return it == ids_.end() ? -1 : it->second;
}

// ---- tokenizing -----------------------------------------------------------------------------------------------------

std::vector<WordPieceTokenizer::Piece> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<Piece> out;
  Scratch scratch;
  basic_words(
      text, never_split_, lower_case_,
      [&](const std::vector<Char>& w) {
        if (w.size() > kMaxWordChars || !word_pieces(w, ids_, max_token_bytes_, scratch)) {
          out.push_back({unk_, w.front().begin, w.back().end});
          return;
        }
        for (const auto& [id, first, last] : scratch.pieces)
          out.push_back({static_cast<std::int32_t>(id), w[first].begin, w[last - 1].end});
      },
      [&](std::int32_t id, std::size_t begin, std::size_t end) {
        out.push_back({id, begin, end});
      });
  return out;
}

std::vector<std::string> WordPieceTokenizer::basic_tokens(std::string_view text) const {
  std::vector<std::string> out;
  basic_words(
      text, never_split_, lower_case_,
      [&](const std::vector<Char>& w) {
        std::string s;
        for (const Char& c : w) append_utf8(s, c.cp);
        out.push_back(std::move(s));
      },
      [&](std::int32_t id, std::size_t, std::size_t) { out.push_back(tokens_[static_cast<std::size_t>(id)]); });
  return out;
}

WordPieceTokenizer::Encoding WordPieceTokenizer::encode_question_context(std::string_view question,
                                                                         std::string_view context,
                                                                         std::int64_t max_len) const {
  if (max_len < 4)
    throw Error(ErrorKind::Usage,
                fmt::format("max_len {} leaves no room for [CLS] question [SEP] context [SEP]", max_len),
                "pass a max_len of at least 4 (BERT takes up to its max_position_embeddings, 512)");
  auto pieces_of = [&](std::string_view text, const char* what) {
    if (text.empty())
      throw Error(ErrorKind::Input, fmt::format("the {} is empty", what),
                  fmt::format("give a {} of at least one word", what));
    std::vector<Piece> p = tokenize(text);
    if (p.empty())
      throw Error(ErrorKind::Input, fmt::format("the {} has no words: only whitespace or control characters", what),
                  fmt::format("give a {} of at least one word", what));
    return p;
  };
  const std::vector<Piece> q = pieces_of(question, "question");
  const std::int64_t nq = static_cast<std::int64_t>(q.size());
  if (nq > max_len - 4)
    throw Error(ErrorKind::Input,
                fmt::format("the question is {} word pieces: with [CLS], two [SEP] and one context piece that needs "
                            "{} positions, more than max_len {}",
                            nq, nq + 4, max_len),
                fmt::format("shorten the question to at most {} word pieces, or raise max_len (BERT takes up to 512)",
                            max_len - 4));
  std::vector<Piece> c = pieces_of(context, "context");

  Encoding e;
  const std::size_t room = static_cast<std::size_t>(max_len - nq - 3);
  if (c.size() > room) {
    c.resize(room);
    e.truncated = true;
  }
  const std::pair<std::size_t, std::size_t> outside{kNpos, kNpos};
  auto push = [&](std::int32_t id, std::int32_t type, std::pair<std::size_t, std::size_t> bytes) {
    e.ids.push_back(id);
    e.type_ids.push_back(type);
    e.context_bytes.push_back(bytes);
  };
  push(cls_, 0, outside);
  for (const Piece& p : q) push(p.id, 0, outside);
  push(sep_, 0, outside);
  e.context_begin = static_cast<std::int64_t>(e.ids.size());
  for (const Piece& p : c) push(p.id, 1, {p.begin, p.end});
  e.context_end = static_cast<std::int64_t>(e.ids.size());
  push(sep_, 1, outside);
  return e;
}

std::string WordPieceTokenizer::span_text(const Encoding& e, std::string_view context, std::int64_t start,
                                          std::int64_t end) {
  // The encoding may come from elsewhere (or be edited): check every index before use.
  if (start > end || start < e.context_begin || end >= e.context_end || start < 0 ||
      static_cast<std::uint64_t>(end) >= e.context_bytes.size())
    return "";
  const std::size_t b = e.context_bytes[static_cast<std::size_t>(start)].first;
  const std::size_t f = e.context_bytes[static_cast<std::size_t>(end)].second;
  if (b == kNpos || f == kNpos || b > f || f > context.size()) return "";
  return std::string(context.substr(b, f - b));
}

}  // namespace roofline::engine::bert
