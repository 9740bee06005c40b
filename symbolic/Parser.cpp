#include "symbolic/Parser.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "support/Precedence.h"
#include "symbolic/Syntax.h"

namespace dsc::symbolic {

namespace {

using enum dsc::precedence::Level;

// At most this many levels of nodes from the root to a leaf. The limit is on the tree rather
// than on the text so that it means the same for an input and for its printed form, which may
// add parentheses (`--n` prints as `-(-n)`); every later pass also recurses on this height.
constexpr int kMaxHeight = 200;

// A guard for the recursive descent itself, so that no input can exhaust the stack. The printer
// needs at most two levels of recursion per level of the tree (`-(` or `!(`), so anything within
// kMaxHeight reparses after printing.
constexpr int kMaxRecursion = 2 * kMaxHeight;

enum class Tok : uint8_t {
  End,
  Int,
  Ident,
  LParen,
  RParen,
  Comma,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  AndAnd,
  OrOr,
  Bang,
  Error, // a byte that starts no token
};

struct Token {
  Tok kind = Tok::End;
  // Byte offset into the text and length; the column is offset + 1.
  size_t offset = 0;
  size_t length = 0;
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A byte as it should appear inside quotes in a message: itself when printable ASCII, otherwise a
// \xNN escape so that NULs and stray UTF-8 bytes stay visible and harmless.
std::string quote_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789abcdef";
  std::string s = "'\\x";
  s += kHex[u >> 4];
  s += kHex[u & 0xf];
  s += "'";
  return s;
}

// Columns are ints in ParseError; absurdly long inputs saturate instead of wrapping.
int column_of(size_t offset) {
  constexpr auto kMax = static_cast<size_t>(std::numeric_limits<int>::max());
  return offset >= kMax ? std::numeric_limits<int>::max() : static_cast<int>(offset) + 1;
}

const std::string& too_deep_message() {
  static const std::string message =
      "expression nests too deeply (more than " + std::to_string(kMaxHeight) + " levels)";
  return message;
}

// A parsed subexpression with what error messages and the height limit need to know about it.
struct Parsed {
  Expr expr;         // undefined after an error
  size_t offset = 0; // where its text starts, for type errors that point at it
  int height = 0;    // levels of nodes, leaves included

  bool ok() const { return expr.defined(); }
};

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) { advance(); }

  ParseResult parse_whole() {
    ParseResult result;
    Parsed e = parse_binary(kOr);
    if (e.ok() && tok_.kind != Tok::End) {
      if (tok_.kind == Tok::RParen) {
        fail(tok_, "unmatched ')'");
      } else if (tok_.kind == Tok::Error) {
        fail_bad_character();
      } else {
        fail(tok_, "trailing input after the expression");
      }
    }
    if (failed_) {
      result.error = error_;
      return result;
    }
    result.expr = std::move(e.expr);
    return result;
  }

  // Where the first token starts, past any leading blanks.
  size_t start_offset() const { return start_offset_; }

private:
  // ---- Lexing ----

  void advance() {
    size_t pos = tok_.offset + tok_.length;
    while (pos < text_.size() && (text_[pos] == ' ' || text_[pos] == '\t'))
      ++pos;
    if (!started_) {
      start_offset_ = pos;
      started_ = true;
    }
    tok_ = lex_at(pos);
  }

  Token lex_at(size_t pos) const {
    Token t;
    t.offset = pos;
    if (pos >= text_.size()) return t;
    auto run = [&](Tok kind, bool (*accepts)(char)) {
      size_t end = pos;
      while (end < text_.size() && accepts(text_[end]))
        ++end;
      t.kind = kind;
      t.length = end - pos;
      return t;
    };
    auto punct = [&](Tok kind, size_t length) {
      t.kind = kind;
      t.length = length;
      return t;
    };
    char c = text_[pos];
    char next = pos + 1 < text_.size() ? text_[pos + 1] : '\0';
    if (is_digit(c)) return run(Tok::Int, is_digit);
    if (is_name_start(c)) return run(Tok::Ident, is_name_char);
    switch (c) {
    case '(':
      return punct(Tok::LParen, 1);
    case ')':
      return punct(Tok::RParen, 1);
    case ',':
      return punct(Tok::Comma, 1);
    case '+':
      return punct(Tok::Plus, 1);
    case '-':
      return punct(Tok::Minus, 1);
    case '*':
      return punct(Tok::Star, 1);
    case '/':
      return punct(Tok::Slash, 1);
    case '%':
      return punct(Tok::Percent, 1);
    case '=':
      if (next == '=') return punct(Tok::EqEq, 2);
      break;
    case '!':
      return next == '=' ? punct(Tok::NotEq, 2) : punct(Tok::Bang, 1);
    case '<':
      return next == '=' ? punct(Tok::LessEq, 2) : punct(Tok::Less, 1);
    case '>':
      return next == '=' ? punct(Tok::GreaterEq, 2) : punct(Tok::Greater, 1);
    case '&':
      if (next == '&') return punct(Tok::AndAnd, 2);
      break;
    case '|':
      if (next == '|') return punct(Tok::OrOr, 2);
      break;
    default:
      break;
    }
    return punct(Tok::Error, 1);
  }

  std::string_view spelling(const Token& t) const { return text_.substr(t.offset, t.length); }

  // ---- Errors: the first one wins and parsing unwinds. ----

  Parsed fail(size_t offset, std::string message) {
    if (!failed_) {
      failed_ = true;
      error_.column = column_of(offset);
      error_.message = std::move(message);
    }
    return Parsed();
  }
  Parsed fail(const Token& t, std::string message) { return fail(t.offset, std::move(message)); }

  // A bad character is reported as such, since "expected X, found '$'" would hide the problem.
  Parsed fail_expected(const std::string& what) {
    if (tok_.kind == Tok::End) return fail(tok_, "unexpected end of input, expected " + what);
    if (tok_.kind == Tok::Error) return fail_bad_character();
    return fail(tok_, "expected " + what + ", found '" + std::string(spelling(tok_)) + "'");
  }

  Parsed fail_bad_character() {
    char c = text_[tok_.offset];
    std::string message = "unexpected character " + quote_byte(c);
    if (c == '=') message += "; equality is '=='";
    if (c == '&') message += "; conjunction is '&&'";
    if (c == '|') message += "; disjunction is '||'";
    return fail(tok_, std::move(message));
  }

  bool check_bool(std::string_view op, const Parsed& x, const char* side) {
    if (x.expr.is_bool()) return true;
    // Built with append: GCC 12 at -O3 warns falsely (-Wrestrict) on chained operator+.
    std::string message = "'";
    message.append(op).append("' needs predicates on both sides; the ").append(side);
    message.append(" side is an integer expression");
    fail(x.offset, std::move(message));
    return false;
  }

  bool check_int(std::string_view op, const Parsed& x, const char* side) {
    if (!x.expr.is_bool()) return true;
    std::string message = "'";
    message.append(op).append("' needs integers on both sides; the ").append(side);
    message.append(" side is a predicate");
    fail(x.offset, std::move(message));
    return false;
  }

  // Wraps a freshly built node whose text starts at `offset`; `op` is blamed if it is too deep.
  Parsed node(Expr e, size_t offset, int child_height, const Token& op) {
    if (child_height >= kMaxHeight) return fail(op, too_deep_message());
    return Parsed{std::move(e), offset, child_height + 1};
  }
  Parsed join(Expr e, const Parsed& lhs, const Parsed& rhs, const Token& op) {
    return node(std::move(e), lhs.offset, std::max(lhs.height, rhs.height), op);
  }

  // ---- Grammar, loosest first ----

  // One level of left-associative binary operators of the shared table (support/Precedence.h),
  // over operands of the next tighter level. Comparisons chain, so their level is parsed apart.
  Parsed parse_binary(int level) {
    if (level == kCompare) return parse_comparison();
    if (level > kMultiplicative) return parse_unary();
    Parsed lhs = parse_binary(level + 1);
    while (lhs.ok()) {
      const InfixOperator* infix = infix_operator_at(level);
      if (!infix) break;
      Token op = tok_;
      advance();
      Parsed rhs = parse_binary(level + 1);
      if (!rhs.ok()) return rhs;
      if (!check_operands(*infix, lhs, rhs)) return Parsed();
      lhs = join(infix->make(lhs.expr, rhs.expr), lhs, rhs, op);
    }
    return lhs;
  }

  // The infix operator at the current token when it binds at `level`, or null.
  const InfixOperator* infix_operator_at(int level) const {
    if (tok_.kind == Tok::Error || precedence::infix_level(spelling(tok_)) != level) return nullptr;
    const InfixOperator* infix = infix_operator(spelling(tok_));
    internal_assert(infix) << "'" << spelling(tok_) << "' has a precedence but no node";
    return infix;
  }

  bool check_operands(const InfixOperator& op, const Parsed& lhs, const Parsed& rhs) {
    if (op.operands == Operands::Predicates)
      return check_bool(op.spelling, lhs, "left") && check_bool(op.spelling, rhs, "right");
    return check_int(op.spelling, lhs, "left") && check_int(op.spelling, rhs, "right");
  }

  // `a < b <= c` chains like Python: each link shares its operands with its neighbours, and the
  // links are joined with `&&`.
  Parsed parse_comparison() {
    Parsed lhs = parse_binary(kAdditive);
    Parsed chain;
    while (lhs.ok()) {
      const InfixOperator* infix = infix_operator_at(kCompare);
      if (!infix) break;
      Token op = tok_;
      advance();
      Parsed rhs = parse_binary(kAdditive);
      if (!rhs.ok()) return rhs;
      if (!check_operands(*infix, lhs, rhs)) return Parsed();
      Parsed link = join(infix->make(lhs.expr, rhs.expr), lhs, rhs, op);
      if (!link.ok()) return link;
      chain = chain.ok() ? join(And::make(chain.expr, link.expr), chain, link, op) : link;
      if (!chain.ok()) return chain;
      lhs = std::move(rhs);
    }
    return chain.ok() ? chain : lhs;
  }

  // Every level of recursion passes through here: parentheses and function arguments restart at
  // parse_binary(kOr), and prefix operators recurse. So this is where the recursion is bounded.
  Parsed parse_unary() {
    if (recursion_ >= kMaxRecursion) return fail(tok_, too_deep_message());
    ++recursion_;
    Parsed e = parse_prefixed();
    --recursion_;
    return e;
  }

  Parsed parse_prefixed() {
    Token op = tok_;
    const PrefixOperator* prefix = op.kind == Tok::Error ? nullptr : prefix_operator(spelling(op));
    if (!prefix) return parse_atom();
    advance();
    // Only a literal right after the minus folds, so that `-(3)` stays Mul(-1, 3) and the
    // printer can spell both it and Const(-3).
    if (op.kind == Tok::Minus && tok_.kind == Tok::Int) {
      return parse_int_literal(op.offset, /*negate=*/true);
    }
    Parsed x = parse_unary();
    if (!x.ok()) return x;
    const bool predicate = prefix->operands == Operands::Predicates;
    if (x.expr.is_bool() != predicate) {
      std::string message = predicate ? "'" : "unary '";
      message.append(prefix->spelling).append("' needs ");
      message.append(predicate ? "a predicate operand; the operand is an integer expression"
                               : "an integer operand; the operand is a predicate");
      return fail(op, std::move(message));
    }
    return node(prefix->make(x.expr), op.offset, x.height, op);
  }

  // A negated literal may have magnitude 2^63, so that INT64_MIN has a spelling.
  Parsed parse_int_literal(size_t start, bool negate) {
    constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;
    Token lit = tok_;
    uint64_t magnitude = 0;
    for (char c : spelling(lit)) {
      auto digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (kMaxMagnitude - digit) / 10)
        return fail(lit, "integer literal out of range");
      magnitude = magnitude * 10 + digit;
    }
    if (!negate && magnitude == kMaxMagnitude) return fail(lit, "integer literal out of range");
    advance();
    int64_t value = static_cast<int64_t>(magnitude);
    if (negate) {
      value = magnitude == kMaxMagnitude ? std::numeric_limits<int64_t>::min()
                                         : -static_cast<int64_t>(magnitude);
    }
    return Parsed{Const::make(value), start, 1};
  }

  Parsed parse_atom() {
    if (tok_.kind == Tok::Int) return parse_int_literal(tok_.offset, /*negate=*/false);
    if (tok_.kind == Tok::Ident) return parse_identifier();
    if (tok_.kind != Tok::LParen) return fail_expected("an expression");
    size_t start = tok_.offset;
    advance();
    Parsed e = parse_binary(kOr);
    if (!e.ok()) return e;
    if (tok_.kind != Tok::RParen) return fail_expected("')'");
    advance();
    e.offset = start;
    return e;
  }

  Parsed parse_identifier() {
    Token name_tok = tok_;
    std::string_view name = spelling(name_tok);
    advance();
    if (std::optional<bool> b = bool_literal(name)) {
      return Parsed{BoolConst::make(*b), name_tok.offset, 1};
    }
    const Function* fn = function(name);
    if (!fn) {
      if (tok_.kind == Tok::LParen) {
        return fail(name_tok, "unknown function '" + std::string(name) + "'; the functions are " +
                                  function_list());
      }
      return Parsed{Sym::make(name), name_tok.offset, 1};
    }
    if (tok_.kind != Tok::LParen) return fail_expected("'(' after " + std::string(name));
    advance();

    // All arguments are parsed before the count is checked, so that the arity error can say how
    // many there were.
    Parsed args[2];
    int count = 0;
    if (tok_.kind != Tok::RParen) {
      while (true) {
        Parsed arg = parse_binary(kOr);
        if (!arg.ok()) return arg;
        if (count < 2) args[count] = std::move(arg);
        ++count;
        if (tok_.kind == Tok::RParen) break;
        if (tok_.kind != Tok::Comma) return fail_expected("',' or ')'");
        advance();
      }
    }
    advance();
    if (count != 2) {
      return fail(name_tok, std::string(name) + " takes 2 arguments, got " + std::to_string(count));
    }
    for (int i = 0; i < 2; ++i) {
      if (args[i].expr.is_bool()) {
        return fail(args[i].offset, std::string(name) + " needs integer arguments; argument " +
                                        std::to_string(i + 1) + " is a predicate");
      }
    }
    return node(fn->make(args[0].expr, args[1].expr), name_tok.offset,
                std::max(args[0].height, args[1].height), name_tok);
  }

  std::string_view text_;
  Token tok_;
  bool started_ = false;
  size_t start_offset_ = 0;
  int recursion_ = 0;
  bool failed_ = false;
  ParseError error_;
};

} // namespace

ParseResult parse_expr(std::string_view text) {
  return Parser(text).parse_whole();
}

ParseResult parse_predicate(std::string_view text) {
  Parser parser(text);
  ParseResult result = parser.parse_whole();
  if (!result.ok() || result.expr.is_bool()) return result;
  result.expr = Expr();
  result.error.column = column_of(parser.start_offset());
  result.error.message = "expected a predicate (a comparison), got an integer expression";
  return result;
}

std::string format_parse_error(std::string_view text, const ParseError& error) {
  std::string out = "error: column " + std::to_string(error.column) + ": " + error.message + "\n";
  // Control characters would break the two-line layout; each becomes one space so that the caret
  // still lines up.
  out += "  ";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  out += "\n  ";
  // The column counts bytes, but a terminal shows one glyph per UTF-8 sequence, so the caret is
  // indented by the number of sequence starts before it.
  size_t end = error.column > 1 ? static_cast<size_t>(error.column - 1) : 0;
  end = std::min(end, text.size());
  for (size_t i = 0; i < end; ++i) {
    auto u = static_cast<unsigned char>(text[i]);
    if ((u & 0xc0) != 0x80) out += ' ';
  }
  out += "^\n";
  return out;
}

} // namespace dsc::symbolic
