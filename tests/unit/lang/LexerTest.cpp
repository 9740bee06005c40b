#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lang/Lexer.h"

namespace dsc::lang {
namespace {

struct Lexed {
  std::vector<Token> tokens; // without the final End
  Token end;
  std::vector<std::string> errors;
};

Lexed lex(const std::string& text) {
  static SourceManager sources; // the tokens' views point into the buffer, which must live
  uint32_t file = sources.add("lex.dsc", text);
  DiagnosticEngine diags(sources);
  Lexer lexer(sources.text(file), file, diags);
  Lexed out;
  for (;;) {
    Token t = lexer.next();
    if (t.kind == TokenKind::End) {
      out.end = t;
      break;
    }
    out.tokens.push_back(t);
  }
  for (const Diagnostic& d : diags.diagnostics())
    out.errors.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " +
                         d.message);
  return out;
}

std::vector<TokenKind> kinds(const std::string& text) {
  std::vector<TokenKind> out;
  for (const Token& t : lex(text).tokens)
    out.push_back(t.kind);
  return out;
}

using K = TokenKind;

TEST(Lexer, EmptyInputIsJustEnd) {
  Lexed l = lex("");
  EXPECT_TRUE(l.tokens.empty());
  EXPECT_EQ(l.end.loc.line, 1u);
  EXPECT_EQ(l.end.loc.col, 1u);
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, Keywords) {
  EXPECT_EQ(kinds("import fn prim extern let var return if else for in where parallel vectorize "
                  "unroll alloc local shared global true false"),
            (std::vector<K>{K::KwImport, K::KwFn,     K::KwPrim,     K::KwExtern,    K::KwLet,
                            K::KwVar,    K::KwReturn, K::KwIf,       K::KwElse,      K::KwFor,
                            K::KwIn,     K::KwWhere,  K::KwParallel, K::KwVectorize, K::KwUnroll,
                            K::KwAlloc,  K::KwLocal,  K::KwShared,   K::KwGlobal,    K::KwTrue,
                            K::KwFalse}));
}

TEST(Lexer, KeywordPrefixesAreIdentifiers) {
  Lexed l = lex("letter fns _if for2 f32 tensor min");
  ASSERT_EQ(l.tokens.size(), 7u);
  for (const Token& t : l.tokens)
    EXPECT_EQ(t.kind, K::Ident) << t.text;
  EXPECT_EQ(l.tokens[0].value, "letter");
  EXPECT_EQ(l.tokens[4].value, "f32");
}

TEST(Lexer, Punctuation) {
  EXPECT_EQ(kinds("-> .. == != <= >= && || [ ] ( ) { } , : ; = . ? + - * / % < > !"),
            (std::vector<K>{
                K::Arrow, K::DotDot,   K::EqEq,     K::NotEq,   K::LessEq, K::GreaterEq, K::AndAnd,
                K::OrOr,  K::LBracket, K::RBracket, K::LParen,  K::RParen, K::LBrace,    K::RBrace,
                K::Comma, K::Colon,    K::Semi,     K::Assign,  K::Dot,    K::Question,  K::Plus,
                K::Minus, K::Star,     K::Slash,    K::Percent, K::Less,   K::Greater,   K::Bang}));
}

TEST(Lexer, LongestMatch) {
  EXPECT_EQ(kinds("a->b"), (std::vector<K>{K::Ident, K::Arrow, K::Ident}));
  EXPECT_EQ(kinds("a-->b"), (std::vector<K>{K::Ident, K::Minus, K::Arrow, K::Ident}));
  EXPECT_EQ(kinds("!=="), (std::vector<K>{K::NotEq, K::Assign}));
  EXPECT_EQ(kinds("<<="), (std::vector<K>{K::Less, K::LessEq}));
  EXPECT_EQ(kinds("x...y"), (std::vector<K>{K::Ident, K::DotDot, K::Dot, K::Ident}));
}

TEST(Lexer, RangeIsNotAFloat) {
  // `0..n` must lex as an integer and `..`, not as the float `0.`.
  Lexed l = lex("0..n 1..2");
  EXPECT_EQ(kinds("0..n 1..2"),
            (std::vector<K>{K::Int, K::DotDot, K::Ident, K::Int, K::DotDot, K::Int}));
  EXPECT_EQ(l.tokens[0].int_value, 0u);
  EXPECT_EQ(l.tokens[5].int_value, 2u);
}

TEST(Lexer, Integers) {
  Lexed l = lex("0 768 007 9223372036854775807 9223372036854775808");
  ASSERT_EQ(l.tokens.size(), 5u);
  EXPECT_EQ(l.tokens[0].int_value, 0u);
  EXPECT_EQ(l.tokens[1].int_value, 768u);
  EXPECT_EQ(l.tokens[2].int_value, 7u);
  EXPECT_EQ(l.tokens[3].int_value, 9223372036854775807u);
  // 2^63 lexes (it is -9223372036854775808 after a minus); the resolver rejects it alone.
  EXPECT_EQ(l.tokens[4].int_value, 9223372036854775808u);
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, IntegerOverflowIsADiagnostic) {
  Lexed l = lex("x = 99999999999999999999");
  ASSERT_EQ(l.tokens.size(), 3u);
  EXPECT_EQ(l.tokens[2].kind, K::Int);
  ASSERT_EQ(l.errors.size(), 1u);
  EXPECT_EQ(l.errors[0], "1:5: integer literal 99999999999999999999 is too large");
}

TEST(Lexer, Floats) {
  Lexed l = lex("0.125 1e-12 3.0e+2 2E3 1.5");
  ASSERT_EQ(l.tokens.size(), 5u);
  for (const Token& t : l.tokens)
    EXPECT_EQ(t.kind, K::Float) << t.text;
  EXPECT_DOUBLE_EQ(l.tokens[0].float_value, 0.125);
  EXPECT_DOUBLE_EQ(l.tokens[1].float_value, 1e-12);
  EXPECT_DOUBLE_EQ(l.tokens[2].float_value, 300.0);
  EXPECT_DOUBLE_EQ(l.tokens[3].float_value, 2000.0);
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, FloatOutOfRange) {
  Lexed l = lex("1e999 1e-999");
  ASSERT_EQ(l.tokens.size(), 2u);
  ASSERT_EQ(l.errors.size(), 1u); // underflow reads as zero
  EXPECT_EQ(l.errors[0], "1:1: number 1e999 is too large");
  EXPECT_EQ(l.tokens[1].float_value, 0.0);
}

TEST(Lexer, IncompleteExponentIsIntThenIdent) {
  EXPECT_EQ(kinds("1e"), (std::vector<K>{K::Int, K::Ident}));
  EXPECT_EQ(kinds("1.e5"), (std::vector<K>{K::Int, K::Dot, K::Ident}));
}

TEST(Lexer, Strings) {
  Lexed l = lex(R"("f16" "" "a\"b" "back\\slash")");
  ASSERT_EQ(l.tokens.size(), 4u);
  EXPECT_EQ(l.tokens[0].value, "f16");
  EXPECT_EQ(l.tokens[1].value, "");
  EXPECT_EQ(l.tokens[2].value, "a\"b");
  EXPECT_EQ(l.tokens[3].value, "back\\slash");
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, UnknownEscape) {
  Lexed l = lex(R"(x "a\nb")");
  ASSERT_EQ(l.tokens.size(), 2u);
  ASSERT_EQ(l.errors.size(), 1u);
  EXPECT_EQ(l.errors[0], "1:5: unknown escape sequence '\\n' in string");
}

TEST(Lexer, UnterminatedString) {
  Lexed l = lex("let s = \"abc\nlet t = 1");
  ASSERT_EQ(l.errors.size(), 1u);
  EXPECT_EQ(l.errors[0], "1:9: unterminated string");
  ASSERT_EQ(l.tokens.size(), 8u); // the string stops at the newline; lexing goes on
  EXPECT_EQ(l.tokens[3].kind, K::String);
  EXPECT_EQ(l.tokens[3].value, "abc");
  EXPECT_EQ(l.tokens[4].kind, K::KwLet);
}

TEST(Lexer, Comments) {
  Lexed l = lex("a # comment with \"quotes\" and $ junk\n# whole line\nb #");
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.tokens[0].value, "a");
  EXPECT_EQ(l.tokens[1].value, "b");
  EXPECT_EQ(l.tokens[1].loc.line, 3u);
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, Locations) {
  Lexed l = lex("fn f(x)\n  let\ty = 1\r\n\n   z");
  ASSERT_EQ(l.tokens.size(), 10u);
  auto at = [&](size_t i) {
    return std::to_string(l.tokens[i].loc.line) + ":" + std::to_string(l.tokens[i].loc.col);
  };
  EXPECT_EQ(at(0), "1:1");  // fn
  EXPECT_EQ(at(1), "1:4");  // f
  EXPECT_EQ(at(2), "1:5");  // (
  EXPECT_EQ(at(3), "1:6");  // x
  EXPECT_EQ(at(5), "2:3");  // let
  EXPECT_EQ(at(6), "2:7");  // y: a tab is one byte
  EXPECT_EQ(at(8), "2:11"); // 1
  EXPECT_EQ(at(9), "4:4");  // z: \r is whitespace
  EXPECT_EQ(l.tokens[5].end.col, 6u);
  EXPECT_EQ(l.tokens[5].text, "let");
}

TEST(Lexer, BadCharactersAreDiagnosedAndSkipped) {
  Lexed l = lex("a $ b @@@ c");
  ASSERT_EQ(l.tokens.size(), 3u);
  ASSERT_EQ(l.errors.size(), 2u); // one per run of bad characters
  EXPECT_EQ(l.errors[0], "1:3: unexpected character '$'");
  EXPECT_EQ(l.errors[1], "1:7: unexpected character '@'");
}

TEST(Lexer, SingleAmpersandAndBar) {
  Lexed l = lex("a & b | c");
  ASSERT_EQ(l.tokens.size(), 3u);
  ASSERT_EQ(l.errors.size(), 2u);
  EXPECT_EQ(l.errors[0], "1:3: unexpected character '&'; did you mean '&&'?");
  EXPECT_EQ(l.errors[1], "1:7: unexpected character '|'; did you mean '||'?");
}

TEST(Lexer, SingleQuote) {
  Lexed l = lex("'f16'");
  ASSERT_EQ(l.errors.size(), 2u);
  EXPECT_EQ(l.errors[0], "1:1: unexpected character '''");
}

TEST(Lexer, NulBytesInTheMiddle) {
  std::string text = std::string("a") + '\0' + "b" + '\0';
  Lexed l = lex(text);
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.tokens[1].value, "b");
  ASSERT_EQ(l.errors.size(), 2u);
  EXPECT_EQ(l.errors[0], "1:2: unexpected character '\\x00'");
  EXPECT_EQ(l.end.loc.col, 5u);
}

TEST(Lexer, NulInsideStringAndComment) {
  std::string text = std::string("\"a") + '\0' + "b\" # c" + '\0' + "d\nx";
  Lexed l = lex(text);
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.tokens[0].value, std::string("a") + '\0' + "b");
  EXPECT_EQ(l.tokens[1].value, "x");
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, Utf8IsShownWhole) {
  Lexed l = lex("a \xCE\xBB b \xFF");
  ASSERT_EQ(l.tokens.size(), 2u);
  ASSERT_EQ(l.errors.size(), 2u);
  EXPECT_EQ(l.errors[0], "1:3: unexpected character '\xCE\xBB'");
  EXPECT_EQ(l.errors[1], "1:8: unexpected character '\\xFF'");
}

TEST(Lexer, ByteOrderMarkIsSkipped) {
  Lexed l = lex("\xEF\xBB\xBF"
                "fn");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l.tokens[0].kind, K::KwFn);
  EXPECT_TRUE(l.errors.empty());
}

TEST(Lexer, DescribeToken) {
  EXPECT_EQ(describe_token(K::Ident, "foo"), "identifier 'foo'");
  EXPECT_EQ(describe_token(K::Int, "42"), "integer 42");
  EXPECT_EQ(describe_token(K::KwLet, "let"), "'let'");
  EXPECT_EQ(describe_token(K::Arrow, "->"), "'->'");
  EXPECT_EQ(describe_token(K::End, ""), "end of file");
  EXPECT_EQ(describe_token(K::String, "\"f16\""), "string \"f16\"");
}

} // namespace
} // namespace dsc::lang
