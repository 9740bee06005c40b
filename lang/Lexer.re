// The .dsc lexer; re2c turns this file into Lexer.cpp (see lang/CMakeLists.txt).
//
// The input is a std::string, whose terminating NUL serves as re2c's end sentinel
// (`re2c:eof`): a NUL before the end is an ordinary (bad) character, so any bytes lex safely.

#include "lang/Lexer.h"

#include <charconv>
#include <system_error>

namespace dsc::lang {

namespace {

constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63; // -2^63 is the most negative int64

const char* const kSpellings[] = {
#define DSC_TOKEN_SPELLING(Name, Spelling) Spelling,
    DSC_TOKEN_KINDS(DSC_TOKEN_SPELLING)
#undef DSC_TOKEN_SPELLING
};

// One byte as a diagnostic shows it: printable ASCII as itself, anything else as \xNN.
std::string show_byte(unsigned char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
  const char* hex = "0123456789ABCDEF";
  return std::string("\\x") + hex[c >> 4] + hex[c & 15];
}

// The length of the well-formed UTF-8 sequence at p (at most `avail` bytes), or 0.
size_t utf8_length(const unsigned char* p, size_t avail) {
  size_t n = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
  if (p[0] >= 0xF5 || n == 0 || n > avail) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return n;
}

bool is_keyword_or_punct(TokenKind k) { return k >= TokenKind::KwImport; }

} // namespace

const char* token_kind_spelling(TokenKind kind) { return kSpellings[static_cast<int>(kind)]; }

std::string describe_token(TokenKind kind, std::string_view text) {
  // Long literals are cut so that a diagnostic stays one readable line.
  std::string shown(text.substr(0, 40));
  if (text.size() > 40) shown += "...";
  switch (kind) {
  case TokenKind::End:
    return "end of file";
  case TokenKind::Ident:
    return "identifier '" + shown + "'";
  case TokenKind::Int:
    return "integer " + shown;
  case TokenKind::Float:
    return "number " + shown;
  case TokenKind::String:
    return "string " + shown;
  default:
    break;
  }
  if (is_keyword_or_punct(kind)) return std::string("'") + token_kind_spelling(kind) + "'";
  return token_kind_spelling(kind);
}

Lexer::Lexer(const std::string& text, uint32_t file, DiagnosticEngine& diags)
    : cursor_(text.c_str()), limit_(text.c_str() + text.size()),
      line_start_(text.c_str()), file_(file), diags_(diags) {
  // A UTF-8 byte order mark is not part of the program.
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) cursor_ += 3;
}

SourceLoc Lexer::loc_at(const char* p) const {
  return SourceLoc{file_, line_, static_cast<uint32_t>(p - line_start_) + 1};
}

void Lexer::decode_int(Token& t) {
  uint64_t magnitude = 0;
  for (char c : t.text) {
    auto digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (kMaxMagnitude - digit) / 10) {
      diags_.error(t.loc, "integer literal " + std::string(t.text.substr(0, 40)) +
                              (t.text.size() > 40 ? "..." : "") + " is too large")
          .notes.push_back({SourceLoc{}, "integers are 64-bit: at most 9223372036854775807"});
      t.int_value = 0;
      return;
    }
    magnitude = magnitude * 10 + digit;
  }
  t.int_value = magnitude;
}

void Lexer::decode_float(Token& t) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  (void)ptr;
  if (ec == std::errc::result_out_of_range) {
    // Underflow reads as zero, like C; overflow has no value.
    size_t e = t.text.find_first_of("eE");
    bool negative_exponent = e != std::string_view::npos && e + 1 < t.text.size() &&
                             t.text[e + 1] == '-';
    if (!negative_exponent) {
      diags_.error(t.loc, "number " + std::string(t.text.substr(0, 40)) + " is too large");
    }
    v = 0;
  } else if (ec != std::errc()) {
    diags_.error(t.loc, "malformed number " + std::string(t.text.substr(0, 40)));
    v = 0;
  }
  t.float_value = v;
}

// `t.text` is the string token with its quotes (the closing one only when terminated).
void Lexer::decode_string(Token& t, bool terminated) {
  std::string_view body = t.text.substr(1, t.text.size() - (terminated ? 2 : 1));
  t.value.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      t.value += c;
      continue;
    }
    char next = body[++i];
    if (next == '"' || next == '\\') {
      t.value += next;
      continue;
    }
    SourceLoc at = t.loc;
    at.col += static_cast<uint32_t>(i); // the backslash: 1 (the quote) + i - 1
    diags_.error(at, "unknown escape sequence '\\" + show_byte(static_cast<unsigned char>(next)) +
                         "' in string")
        .notes.push_back({SourceLoc{}, "the only escapes are \\\" and \\\\"});
    t.value += '\\';
    t.value += next;
  }
}

Token Lexer::next() {
  for (;;) {
    const char* start = cursor_;
    const char* YYMARKER = nullptr;
    Token t;
    t.loc = loc_at(start);
    auto finish = [&](TokenKind kind) {
      t.kind = kind;
      t.text = std::string_view(start, static_cast<size_t>(cursor_ - start));
      t.end = loc_at(cursor_);
      return t;
    };

    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:define:YYCURSOR = cursor_;
      re2c:define:YYLIMIT = limit_;
      re2c:yyfill:enable = 0;
      re2c:eof = 0;

      ident   = [A-Za-z_][A-Za-z0-9_]*;
      digits  = [0-9]+;
      exp     = [eE] [+-]? digits;
      float   = digits "." digits exp? | digits exp;
      strchar = [^"\\\n] | "\\" [^\n];
      // Bytes that cannot start any token (one-byte `&` and `|` are handled below).
      bad     = [^A-Za-z0-9_ \t\r\v\f\n"#()[\]{},:;=.?+\-*/%<>!&|'];

      $ {
        t.loc = loc_at(limit_);
        return finish(TokenKind::End);
      }

      [ \t\r\v\f]+  { continue; }
      "\n"          { newline(cursor_); continue; }
      "#" [^\n]*    { continue; }

      "import"    { return finish(TokenKind::KwImport); }
      "fn"        { return finish(TokenKind::KwFn); }
      "prim"      { return finish(TokenKind::KwPrim); }
      "extern"    { return finish(TokenKind::KwExtern); }
      "let"       { return finish(TokenKind::KwLet); }
      "var"       { return finish(TokenKind::KwVar); }
      "return"    { return finish(TokenKind::KwReturn); }
      "if"        { return finish(TokenKind::KwIf); }
      "else"      { return finish(TokenKind::KwElse); }
      "for"       { return finish(TokenKind::KwFor); }
      "in"        { return finish(TokenKind::KwIn); }
      "where"     { return finish(TokenKind::KwWhere); }
      "parallel"  { return finish(TokenKind::KwParallel); }
      "vectorize" { return finish(TokenKind::KwVectorize); }
      "unroll"    { return finish(TokenKind::KwUnroll); }
      "alloc"     { return finish(TokenKind::KwAlloc); }
      "local"     { return finish(TokenKind::KwLocal); }
      "shared"    { return finish(TokenKind::KwShared); }
      "global"    { return finish(TokenKind::KwGlobal); }
      "true"      { return finish(TokenKind::KwTrue); }
      "false"     { return finish(TokenKind::KwFalse); }
      "carry"     { return finish(TokenKind::KwCarry); }
      "while"     { return finish(TokenKind::KwWhile); }

      ident {
        finish(TokenKind::Ident);
        t.value = std::string(t.text);
        return t;
      }
      digits {
        finish(TokenKind::Int);
        decode_int(t);
        return t;
      }
      float {
        finish(TokenKind::Float);
        decode_float(t);
        return t;
      }
      ["] strchar* ["] {
        finish(TokenKind::String);
        decode_string(t, /*terminated=*/true);
        return t;
      }
      ["] strchar* "\\"? {
        finish(TokenKind::String);
        diags_.error(t.loc, "unterminated string")
            .notes.push_back({SourceLoc{}, "a string ends with '\"' on the line it starts"});
        decode_string(t, /*terminated=*/false);
        return t;
      }

      "->" { return finish(TokenKind::Arrow); }
      ".." { return finish(TokenKind::DotDot); }
      "==" { return finish(TokenKind::EqEq); }
      "!=" { return finish(TokenKind::NotEq); }
      "<=" { return finish(TokenKind::LessEq); }
      ">=" { return finish(TokenKind::GreaterEq); }
      "&&" { return finish(TokenKind::AndAnd); }
      "||" { return finish(TokenKind::OrOr); }
      "["  { return finish(TokenKind::LBracket); }
      "]"  { return finish(TokenKind::RBracket); }
      "("  { return finish(TokenKind::LParen); }
      ")"  { return finish(TokenKind::RParen); }
      "{"  { return finish(TokenKind::LBrace); }
      "}"  { return finish(TokenKind::RBrace); }
      ","  { return finish(TokenKind::Comma); }
      ":"  { return finish(TokenKind::Colon); }
      ";"  { return finish(TokenKind::Semi); }
      "="  { return finish(TokenKind::Assign); }
      "."  { return finish(TokenKind::Dot); }
      "?"  { return finish(TokenKind::Question); }
      "+"  { return finish(TokenKind::Plus); }
      "-"  { return finish(TokenKind::Minus); }
      "*"  { return finish(TokenKind::Star); }
      "/"  { return finish(TokenKind::Slash); }
      "%"  { return finish(TokenKind::Percent); }
      "<"  { return finish(TokenKind::Less); }
      ">"  { return finish(TokenKind::Greater); }
      "!"  { return finish(TokenKind::Bang); }

      "&" {
        diags_.error(t.loc, "unexpected character '&'; did you mean '&&'?");
        continue;
      }
      "|" {
        diags_.error(t.loc, "unexpected character '|'; did you mean '||'?");
        continue;
      }
      "'" {
        diags_.error(t.loc, "unexpected character '''")
            .notes.push_back({SourceLoc{}, "strings are written in double quotes: \"f16\""});
        continue;
      }
      bad+ {
        // One diagnostic for a run of bad bytes; a UTF-8 character is shown whole.
        auto* p = reinterpret_cast<const unsigned char*>(start);
        size_t n = utf8_length(p, static_cast<size_t>(cursor_ - start));
        std::string shown = n ? std::string(start, n) : show_byte(p[0]);
        diags_.error(t.loc, "unexpected character '" + shown + "'");
        continue;
      }
    */
  }
}

} // namespace dsc::lang
