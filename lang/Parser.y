// The .dsc grammar (docs/language.md). Bison generates an LALR(1) parser in C++ from this file
// (see lang/CMakeLists.txt); the tokens come from the re2c lexer (Lexer.re).
//
// The grammar is newline-insensitive: statements begin with a keyword or a name and end where
// the next one begins, and `;` is accepted anywhere a statement may start, and ignored. One
// expression grammar serves graph code, prim code, dims and `where` clauses; Resolve.cpp gives
// each expression its meaning.
//
// Error recovery happens at statement and declaration boundaries through the `error` token, so
// a file with several mistakes gets one diagnostic for each.

%require "3.8"
%language "c++"
%skeleton "lalr1.cc"

%define api.namespace {dsc::lang::detail}
%define api.parser.class {Parser}
%define api.value.type variant
%define api.token.constructor
%define api.location.type {dsc::lang::ast::Span}
%define parse.error custom
%define parse.lac full
%locations

%param {ParseDriver& drv}

%code requires {
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lang/Ast.h"
#include "lang/Lexer.h"

namespace dsc::lang::detail {
class ParseDriver;
} // namespace dsc::lang::detail
}

%code provides {
namespace dsc::lang::detail {

// The state one parse shares between the lexer adapter, the grammar actions and the error
// reporter.
class ParseDriver {
public:
  ParseDriver(const std::string& text, uint32_t file, DiagnosticEngine& diags)
      : lexer_(text, file, diags), diags_(diags), errors_at_start_(diags.error_count()),
        diagnostics_at_start_(diags.diagnostics().size()) {}

  Parser::symbol_type next_token();
  void report_syntax_error(const Parser::context& ctx);
  bool failed() const { return diags_.error_count() != errors_at_start_; }
  // The index of the first diagnostic of this parse.
  size_t first_error() const { return diagnostics_at_start_; }

  // Too-tall subtrees are replaced by an Error node (or dropped), after one diagnostic, so that
  // every later recursive walk is bounded.
  ast::ExprPtr cap(ast::ExprPtr e);
  ast::StmtPtr cap(ast::StmtPtr s);

  DiagnosticEngine& diags() { return diags_; }
  ast::Module module;

private:
  void too_deep(SourceLoc loc);
  void too_long(SourceLoc loc);

  Lexer lexer_;
  DiagnosticEngine& diags_;
  size_t errors_at_start_;
  size_t diagnostics_at_start_;
  Token last_;                     // the most recent token, which is the lookahead at an error
  int bracket_depth_ = 0;
  bool too_deep_ = false;          // reported; later syntax errors are consequences
  bool too_long_ = false;          // a chain too long, reported
  bool stopped_ = false;           // the lexer was cut off: only End follows
  uint32_t last_error_line_ = 0;   // at most one syntax error per line
};

} // namespace dsc::lang::detail
}

%code {
#include <algorithm>

namespace dsc::lang::detail {

Parser::symbol_type yylex(ParseDriver& drv) { return drv.next_token(); }

namespace {

using ast::ExprKind;
using ast::ExprPtr;
using ast::Op;
using ast::StmtPtr;
using ast::make_block;
using ast::make_decl;
using ast::make_stmt;
using ast::named_type;
using ast::tensor_type;
using ast::tuple_type;
using ast::wrap_expr;
using ast::wrap_stmt;

template <typename T> std::vector<T> one(T x) {
  std::vector<T> v;
  v.push_back(std::move(x));
  return v;
}

template <typename T> std::vector<T> append(std::vector<T> v, T x) {
  v.push_back(std::move(x));
  return v;
}

ExprPtr leaf(ExprKind kind, const ast::Span& at) { return ast::make_leaf(kind, at.begin); }

// `as [dims] strides [strides] offset N` after a type, the three words checked (they are words
// here, not keywords).
std::shared_ptr<ast::ParamView> strided_view(ParseDriver& drv, const std::string& as,
                                             const ast::Span& as_at, std::vector<ExprPtr> shape,
                                             const std::string& strides_word,
                                             const ast::Span& strides_at,
                                             std::vector<ExprPtr> strides,
                                             const std::string& offset_word,
                                             const ast::Span& offset_at, ExprPtr offset) {
  for (const auto& [word, want, at] : {std::tuple{&as, "as", as_at.begin},
                                       std::tuple{&strides_word, "strides", strides_at.begin},
                                       std::tuple{&offset_word, "offset", offset_at.begin}})
    if (*word != want)
      drv.diags().error(at, std::string("expected `as [dims] strides [strides] offset N` after "
                                        "the type; found `") + *word + "` where `" + want +
                                "` goes");
  auto v = std::make_shared<ast::ParamView>();
  v->loc = as_at.begin;
  v->shape = std::move(shape);
  v->strides = std::move(strides);
  v->offset = std::move(offset);
  return v;
}

// `epilogue PRIM` after an extern's routine, the word checked (a word here, not a keyword).
ast::Ident epilogue_clause(ParseDriver& drv, const std::string& word, const ast::Span& word_at,
                           std::string prim, const ast::Span& prim_at) {
  if (word != "epilogue")
    drv.diags().error(word_at.begin, "expected `epilogue PRIM` after the routine's name, found `" +
                                         word + "`");
  return ast::Ident{std::move(prim), prim_at.begin};
}

StmtPtr finish(ParseDriver& drv, StmtPtr s) {
  ast::update_height(*s);
  return drv.cap(std::move(s));
}

// `parallel for ...`: the loop (null when it was dropped for nesting too deep) gets its kind.
// The resolver checks the word against ir/ForKinds.def.
StmtPtr loop_kind(StmtPtr loop, std::string kind, const ast::Span& at) {
  if (loop) {
    loop->loc = at.begin;
    loop->loop_kind = std::move(kind);
    loop->loop_kind_loc = at.begin;
  }
  return loop;
}

ExprPtr binary(ParseDriver& drv, Op op, const ast::Span& at, ExprPtr a, ExprPtr b) {
  return drv.cap(ast::make_binary(op, at.begin, std::move(a), std::move(b)));
}

ExprPtr compare(ParseDriver& drv, Op op, const ast::Span& at, ExprPtr a, ExprPtr b) {
  return drv.cap(ast::make_compare(op, at.begin, std::move(a), std::move(b)));
}

} // namespace
} // namespace dsc::lang::detail
}

// Token declarations follow DSC_TOKEN_KINDS (Lexer.h) in order, so that the symbol kinds and
// the lexer's kinds correspond one to one.
%token End 0 "end of file"
%token <std::string> Ident "identifier"
%token <uint64_t> Int "integer"
%token <double> Float "number"
%token <std::string> String "string"
%token KwImport "import" KwFn "fn" KwPrim "prim" KwExtern "extern" KwLet "let" KwVar "var"
       KwReturn "return" KwIf "if" KwElse "else" KwFor "for" KwIn "in" KwWhere "where"
       KwParallel "parallel" KwVectorize "vectorize" KwUnroll "unroll" KwAlloc "alloc"
       KwLocal "local" KwShared "shared" KwGlobal "global" KwTrue "true" KwFalse "false"
       KwCarry "carry" KwWhile "while"
%token Arrow "->" DotDot ".." EqEq "==" NotEq "!=" LessEq "<=" GreaterEq ">=" AndAnd "&&"
       OrOr "||" LBracket "[" RBracket "]" LParen "(" RParen ")" LBrace "{" RBrace "}"
       Comma "," Colon ":" Semi ";" Assign "=" Dot "." Question "?" Plus "+" Minus "-"
       Star "*" Slash "/" Percent "%" Less "<" Greater ">" Bang "!"

%nterm <std::unique_ptr<ast::Decl>> decl fn_decl prim_decl extern_decl extern_head
%nterm <std::vector<ast::Param>> params param_list
%nterm <ast::Param> param extern_ret
%nterm <ast::TypeNode> type
%nterm <std::vector<ast::TypeNode>> type_list
%nterm <std::vector<ast::ExprPtr>> where_opt expr_list dims
%nterm <std::unique_ptr<ast::Block>> fn_body branch prim_block
%nterm <std::vector<ast::StmtPtr>> graph_items prim_items
%nterm <ast::StmtPtr> graph_item prim_item let_stmt prim_if loop
%nterm <std::vector<ast::Ident>> let_names
%nterm <ast::AllocScope> alloc_scope
%nterm <ast::ExprPtr> expr postfix primary if_expr for_expr
%nterm <std::vector<ast::Carry>> carries carry_list
%nterm <ast::Carry> carry
%nterm <std::unique_ptr<ast::Block>> while_opt
%nterm <std::string> qualname
%nterm <std::vector<ast::Arg>> args arg_list
%nterm <ast::Arg> arg
%nterm <std::vector<ast::RoutineAttribute>> routine_attributes_opt routine_attribute_list
%nterm <ast::RoutineAttribute> routine_attribute
%nterm <std::vector<int64_t>> attribute_ints
%nterm <int64_t> attribute_int

// Loosest first. Comparisons chain (make_compare), so left association is what builds a chain.
// The %left levels restate support/Precedence.h, which the printers read; PrecedenceTest checks
// that the two agree.
//
// LET_VALUE: in an if-branch a complete `let` value may be followed by the branch's result,
// and a result may begin with `(`, `[` or `-`. The longer reading (a call, an index, a
// subtraction) wins; docs/language.md tells users to write `;` before such a result.
%precedence LET_VALUE
%left "||"
%left "&&"
%left "==" "!=" "<" "<=" ">" ">="
%left "+" "-"
%left "*" "/" "%"
%precedence UNARY
%precedence "(" "["

%start module

%%

module:
    decls
  ;

decls:
    %empty
  | decls decl   { drv.module.decls.push_back(std::move(*$2)); }
  | decls ";"
  | decls error
  ;

decl:
    "import" Ident  { $$ = make_decl(ast::DeclKind::Import, @1, std::move($2), @2); }
  | fn_decl         { $$ = std::move($1); }
  | prim_decl       { $$ = std::move($1); }
  | extern_decl     { $$ = std::move($1); }
  ;

fn_decl:
    "fn" Ident "(" params ")" where_opt fn_body {
      $$ = make_decl(ast::DeclKind::Fn, @1, std::move($2), @2);
      $$->params = std::move($4);
      $$->where = std::move($6);
      $$->body = std::move($7);
    }
  | "fn" Ident "(" params ")" "->" type where_opt fn_body {
      $$ = make_decl(ast::DeclKind::Fn, @1, std::move($2), @2);
      $$->params = std::move($4);
      $$->has_ret = true;
      $$->ret = std::move($7);
      $$->where = std::move($8);
      $$->body = std::move($9);
    }
  ;

prim_decl:
    "prim" Ident "(" params ")" "->" "(" params ")" where_opt prim_block {
      $$ = make_decl(ast::DeclKind::Prim, @1, std::move($2), @2);
      $$->params = std::move($4);
      $$->outputs = std::move($8);
      $$->where = std::move($10);
      $$->body = std::move($11);
    }
  ;

extern_decl:
    extern_head { $$ = std::move($1); }
  | extern_head Ident Ident {
      // `= "dsc.sgemm" epilogue PRIM`: the routine calls PRIM on each block of rows it finishes
      // (a matmul's fused epilogue); `epilogue` is a word here, not a keyword.
      $$ = std::move($1);
      $$->epilogue = epilogue_clause(drv, $2, @2, std::move($3), @3);
    }
  | extern_head Ident Ident Ident Ident {
      // `... epilogue PRIM first_row R0`: PRIM's symbol R0 receives each block's first row.
      $$ = std::move($1);
      $$->epilogue = epilogue_clause(drv, $2, @2, std::move($3), @3);
      if ($4 != "first_row")
        drv.diags().error(@4.begin, "expected `first_row SYMBOL` after the epilogue, found `" +
                                        $4 + "`");
      $$->epilogue_first_row = ast::Ident{std::move($5), @5.begin};
    }
  ;

extern_head:
    "extern" "fn" Ident "(" params ")" "->" extern_ret where_opt "=" String routine_attributes_opt {
      $$ = make_decl(ast::DeclKind::Extern, @1, std::move($3), @3);
      $$->params = std::move($5);
      $$->has_ret = true;
      $$->ret = std::move($8.type);
      $$->ret_view = std::move($8.view);
      $$->where = std::move($9);
      $$->symbol = std::move($11);
      $$->symbol_loc = @11.begin;
      $$->attributes = std::move($12);
    }
  ;

// The routine's attributes: `(stride = [2, 2], padding = [1, 1])`.
routine_attributes_opt:
    %empty                              { }
  | "(" routine_attribute_list ")"      { $$ = std::move($2); }
  | "(" routine_attribute_list "," ")"  { $$ = std::move($2); }
  ;

routine_attribute_list:
    routine_attribute                             { $$ = one(std::move($1)); }
  | routine_attribute_list "," routine_attribute  { $$ = append(std::move($1), std::move($3)); }
  ;

routine_attribute:
    Ident "=" "[" attribute_ints "]" {
      $$.name = ast::Ident{std::move($1), @1.begin};
      $$.values = std::move($4);
    }
  ;

attribute_ints:
    attribute_int                     { $$ = one(std::move($1)); }
  | attribute_ints "," attribute_int  { $$ = append(std::move($1), std::move($3)); }
  ;

attribute_int:
    Int      { $$ = static_cast<int64_t>($1); } // the lexer refuses ints past int64
  | "-" Int  { $$ = -static_cast<int64_t>($2); }
  ;

// An extern's result, possibly written through a strided view of the buffer it returns.
extern_ret:
    type                 { $$.type = std::move($1); }
  | type Ident "[" dims "]" Ident "[" dims "]" Ident expr {
      $$.type = std::move($1);
      $$.view = strided_view(drv, $2, @2, std::move($4), $6, @6, std::move($8), $10, @10,
                             std::move($11));
    }
  ;

params:
    %empty               { }
  | param_list           { $$ = std::move($1); }
  | param_list ","       { $$ = std::move($1); }
  ;

param_list:
    param                 { $$ = one(std::move($1)); }
  | param_list "," param  { $$ = append(std::move($1), std::move($3)); }
  ;

param:
    Ident ":" type           { $$.name = ast::Ident{std::move($1), @1.begin}; $$.type = std::move($3); }
  | Ident ":" type Ident "[" dims "]" Ident "[" dims "]" Ident expr {
      // An extern's operand read as a strided view: `a: f32[B, S, 2304] as [B, 12, S, 64]
      // strides [2304*S, 64, 2304, 1] offset 768`.
      $$.name = ast::Ident{std::move($1), @1.begin};
      $$.type = std::move($3);
      $$.view = strided_view(drv, $4, @4, std::move($6), $8, @8, std::move($10), $12, @12,
                             std::move($13));
    }
  | Ident ":" type "=" expr  {
      $$.name = ast::Ident{std::move($1), @1.begin};
      $$.type = std::move($3);
      $$.default_value = std::move($5);
    }
  ;

where_opt:
    %empty               { }
  | "where" expr_list    { $$ = std::move($2); }
  ;

type:
    Ident                           { $$ = named_type(std::move($1), @1); }
  | Ident "[" dims "]"              { $$ = tensor_type(std::move($1), @1, std::move($3)); }
  | "(" ")"                         { $$ = tuple_type(@1, {}); }
  | "(" type ")"                    { $$ = std::move($2); }
  | "(" type "," ")"                { $$ = tuple_type(@1, one(std::move($2))); }
  | "(" type "," type_list ")"      {
      std::vector<ast::TypeNode> fields = one(std::move($2));
      for (ast::TypeNode& t : $4) fields.push_back(std::move(t));
      $$ = tuple_type(@1, std::move(fields));
    }
  | "(" type "," type_list "," ")"  {
      std::vector<ast::TypeNode> fields = one(std::move($2));
      for (ast::TypeNode& t : $4) fields.push_back(std::move(t));
      $$ = tuple_type(@1, std::move(fields));
    }
  ;

type_list:
    type                 { $$ = one(std::move($1)); }
  | type_list "," type   { $$ = append(std::move($1), std::move($3)); }
  ;

dims:
    %empty               { }
  | expr_list            { $$ = std::move($1); }
  | expr_list ","        { $$ = std::move($1); }
  ;

expr_list:
    expr                 { $$ = one(std::move($1)); }
  | expr_list "," expr   { $$ = append(std::move($1), std::move($3)); }
  ;

// ---------------------------------------------------------------- graph code

fn_body:
    "{" graph_items "}"  { $$ = make_block(@1, @3, std::move($2), nullptr); }
  ;

graph_items:
    %empty                    { }
  | graph_items graph_item    { $$ = append(std::move($1), std::move($2)); }
  | graph_items ";"           { $$ = std::move($1); }
  | graph_items error         { $$ = std::move($1); }
  ;

graph_item:
    let_stmt       { $$ = std::move($1); }
  | "return" expr %prec LET_VALUE {
      $$ = make_stmt(ast::StmtKind::Return, @1);
      $$->value = std::move($2);
      $$ = finish(drv, std::move($$));
    }
  ;

let_stmt:
    "let" let_names "=" expr %prec LET_VALUE {
      $$ = make_stmt(ast::StmtKind::Let, @1);
      $$->names = std::move($2);
      $$->value = std::move($4);
      $$ = finish(drv, std::move($$));
    }
  | "let" let_names ":" type "=" expr %prec LET_VALUE {
      $$ = make_stmt(ast::StmtKind::Let, @1);
      $$->names = std::move($2);
      $$->has_type = true;
      $$->type = std::move($4);
      $$->value = std::move($6);
      $$ = finish(drv, std::move($$));
    }
  ;

let_names:
    Ident                  { $$ = one(ast::Ident{std::move($1), @1.begin}); }
  | let_names "," Ident    { $$ = append(std::move($1), ast::Ident{std::move($3), @3.begin}); }
  ;

// An if-branch: bindings, then the branch's value.
branch:
    "{" graph_items expr "}"  { $$ = make_block(@1, @4, std::move($2), std::move($3)); }
    // Without a result: the resolver says what is missing (or that `return` is misplaced).
  | "{" graph_items "}"       { $$ = make_block(@1, @3, std::move($2), nullptr); }
  ;

if_expr:
    "if" expr branch "else" branch {
      $$ = drv.cap(ast::make_if(@1.begin, std::move($2), std::move($3), std::move($5)));
    }
  | "if" expr branch "else" if_expr {
      $$ = drv.cap(ast::make_if(@1.begin, std::move($2), std::move($3), wrap_expr(std::move($5))));
    }
  ;

// A graph loop: `for i in 0..N carry (h = x, c: f32[T + i] = c0) while cond { ...; (h2, c2) }`.
for_expr:
    "for" Ident "in" expr ".." expr where_opt "carry" "(" carries ")" while_opt branch {
      auto parts = std::make_unique<ast::LoopParts>();
      parts->var = ast::Ident{std::move($2), @2.begin};
      parts->lo = std::move($4);
      parts->hi = std::move($6);
      parts->where = std::move($7);
      parts->carries = std::move($10);
      parts->cond = std::move($12);
      parts->body = std::move($13);
      $$ = drv.cap(ast::make_for(@1.begin, std::move(parts)));
    }
  ;

carries:
    carry_list           { $$ = std::move($1); }
  | carry_list ","       { $$ = std::move($1); }
  ;

carry_list:
    carry                  { $$ = one(std::move($1)); }
  | carry_list "," carry   { $$ = append(std::move($1), std::move($3)); }
  ;

carry:
    Ident "=" expr {
      $$.name = ast::Ident{std::move($1), @1.begin};
      $$.init = std::move($3);
    }
  | Ident ":" type "=" expr {
      $$.name = ast::Ident{std::move($1), @1.begin};
      $$.has_type = true;
      $$.type = std::move($3);
      $$.init = std::move($5);
    }
  ;

while_opt:
    %empty            { }
  | "while" expr      { $$ = wrap_expr(std::move($2)); }
  | "while" branch    { $$ = std::move($2); }
  ;

// ---------------------------------------------------------------- prim code

prim_block:
    "{" prim_items "}"  { $$ = make_block(@1, @3, std::move($2), nullptr); }
  ;

prim_items:
    %empty                  { }
  | prim_items prim_item    { $$ = append(std::move($1), std::move($2)); }
  | prim_items ";"          { $$ = std::move($1); }
  | prim_items error        { $$ = std::move($1); }
  ;

prim_item:
    let_stmt  { $$ = std::move($1); }
  | "var" let_names ":" type "=" expr {
      $$ = make_stmt(ast::StmtKind::Let, @1);
      $$->is_var = true;
      $$->names = std::move($2);
      $$->has_type = true;
      $$->type = std::move($4);
      $$->value = std::move($6);
      $$ = finish(drv, std::move($$));
    }
  | "var" let_names "=" expr {
      $$ = make_stmt(ast::StmtKind::Let, @1);
      $$->is_var = true;
      $$->names = std::move($2);
      $$->value = std::move($4);
      $$ = finish(drv, std::move($$));
    }
  | Ident "=" expr {
      $$ = make_stmt(ast::StmtKind::Assign, @1);
      $$->names = one(ast::Ident{std::move($1), @1.begin});
      $$->value = std::move($3);
      $$ = finish(drv, std::move($$));
    }
  | Ident "[" dims "]" "=" expr {
      $$ = make_stmt(ast::StmtKind::Store, @1);
      ExprPtr base = leaf(ExprKind::Name, @1);
      base->text = std::move($1);
      $$->target = drv.cap(ast::make_index(@1.begin, std::move(base), std::move($3)));
      $$->value = std::move($6);
      $$ = finish(drv, std::move($$));
    }
  | qualname "(" args ")" {
      $$ = make_stmt(ast::StmtKind::Eval, @1);
      $$->value = drv.cap(ast::make_call(std::move($1), @1.begin, std::move($3)));
      $$ = finish(drv, std::move($$));
    }
  | loop                             { $$ = std::move($1); }
  | "parallel" loop                  { $$ = loop_kind(std::move($2), "parallel", @1); }
  | "vectorize" loop                 { $$ = loop_kind(std::move($2), "vectorize", @1); }
  | "unroll" loop                    { $$ = loop_kind(std::move($2), "unroll", @1); }
  | Ident loop                       { $$ = loop_kind(std::move($2), std::move($1), @1); }
  | prim_if                          { $$ = std::move($1); }
  | "alloc" Ident ":" type alloc_scope {
      $$ = make_stmt(ast::StmtKind::Alloc, @1);
      $$->names = one(ast::Ident{std::move($2), @2.begin});
      $$->has_type = true;
      $$->type = std::move($4);
      $$->scope = $5;
      $$ = finish(drv, std::move($$));
    }
  ;

loop:
    "for" Ident "in" expr ".." expr prim_block {
      $$ = make_stmt(ast::StmtKind::For, @1);
      $$->names = one(ast::Ident{std::move($2), @2.begin});
      $$->lo = std::move($4);
      $$->hi = std::move($6);
      $$->body = std::move($7);
      $$ = finish(drv, std::move($$));
    }
  ;

prim_if:
    "if" expr prim_block {
      $$ = make_stmt(ast::StmtKind::If, @1);
      $$->cond = std::move($2);
      $$->body = std::move($3);
      $$ = finish(drv, std::move($$));
    }
  | "if" expr prim_block "else" prim_block {
      $$ = make_stmt(ast::StmtKind::If, @1);
      $$->cond = std::move($2);
      $$->body = std::move($3);
      $$->else_body = std::move($5);
      $$ = finish(drv, std::move($$));
    }
  | "if" expr prim_block "else" prim_if {
      $$ = make_stmt(ast::StmtKind::If, @1);
      $$->cond = std::move($2);
      $$->body = std::move($3);
      $$->else_body = wrap_stmt(std::move($5));
      $$ = finish(drv, std::move($$));
    }
  ;

alloc_scope:
    %empty     { $$ = ast::AllocScope::Default; }
  | "local"    { $$ = ast::AllocScope::Local; }
  | "shared"   { $$ = ast::AllocScope::Shared; }
  | "global"   { $$ = ast::AllocScope::Global; }
  ;

// ---------------------------------------------------------------- expressions

expr:
    expr "||" expr          { $$ = binary(drv, Op::Or, @2, std::move($1), std::move($3)); }
  | expr "&&" expr          { $$ = binary(drv, Op::And, @2, std::move($1), std::move($3)); }
  | expr "==" expr          { $$ = compare(drv, Op::EQ, @2, std::move($1), std::move($3)); }
  | expr "!=" expr          { $$ = compare(drv, Op::NE, @2, std::move($1), std::move($3)); }
  | expr "<" expr           { $$ = compare(drv, Op::LT, @2, std::move($1), std::move($3)); }
  | expr "<=" expr          { $$ = compare(drv, Op::LE, @2, std::move($1), std::move($3)); }
  | expr ">" expr           { $$ = compare(drv, Op::GT, @2, std::move($1), std::move($3)); }
  | expr ">=" expr          { $$ = compare(drv, Op::GE, @2, std::move($1), std::move($3)); }
  | expr "+" expr           { $$ = binary(drv, Op::Add, @2, std::move($1), std::move($3)); }
  | expr "-" expr           { $$ = binary(drv, Op::Sub, @2, std::move($1), std::move($3)); }
  | expr "*" expr           { $$ = binary(drv, Op::Mul, @2, std::move($1), std::move($3)); }
  | expr "/" expr           { $$ = binary(drv, Op::Div, @2, std::move($1), std::move($3)); }
  | expr "%" expr           { $$ = binary(drv, Op::Mod, @2, std::move($1), std::move($3)); }
  | "-" expr %prec UNARY    { $$ = drv.cap(ast::make_unary(Op::Neg, @1.begin, std::move($2))); }
  | "!" expr %prec UNARY    { $$ = drv.cap(ast::make_unary(Op::Not, @1.begin, std::move($2))); }
  | postfix %prec LET_VALUE  { $$ = std::move($1); }
  ;

postfix:
    primary                          { $$ = std::move($1); }
  | postfix "[" dims "]"             {
      SourceLoc at = $1->loc;
      $$ = drv.cap(ast::make_index(at, std::move($1), std::move($3)));
    }
  | qualname "(" args ")"            { $$ = drv.cap(ast::make_call(std::move($1), @1.begin, std::move($3))); }
  // `where` is a keyword (of signatures) and also the name of an op: where(cond, a, b).
  | "where" "(" args ")"             { $$ = drv.cap(ast::make_call("where", @1.begin, std::move($3))); }
  ;

primary:
    qualname %prec LET_VALUE  { $$ = leaf(ExprKind::Name, @1); $$->text = std::move($1); }
  | Int             { $$ = leaf(ExprKind::Int, @1); $$->int_value = $1; }
  | Float           { $$ = leaf(ExprKind::Float, @1); $$->float_value = $1; }
  | String          { $$ = leaf(ExprKind::String, @1); $$->text = std::move($1); }
  | "true"          { $$ = leaf(ExprKind::Bool, @1); $$->bool_value = true; }
  | "false"         { $$ = leaf(ExprKind::Bool, @1); $$->bool_value = false; }
  | "?"             { $$ = leaf(ExprKind::Question, @1); }
  | "(" expr ")"    { $$ = std::move($2); $$->parenthesized = true; }
  | "(" ")"         { $$ = ast::make_list(ExprKind::Tuple, @1.begin, {}); }
  | "(" expr "," ")" {
      $$ = drv.cap(ast::make_list(ExprKind::Tuple, @1.begin, one(std::move($2))));
    }
  | "(" expr "," expr_list ")" {
      std::vector<ExprPtr> items = one(std::move($2));
      for (ExprPtr& e : $4) items.push_back(std::move(e));
      $$ = drv.cap(ast::make_list(ExprKind::Tuple, @1.begin, std::move(items)));
    }
  | "(" expr "," expr_list "," ")" {
      std::vector<ExprPtr> items = one(std::move($2));
      for (ExprPtr& e : $4) items.push_back(std::move(e));
      $$ = drv.cap(ast::make_list(ExprKind::Tuple, @1.begin, std::move(items)));
    }
  | "[" dims "]"    { $$ = drv.cap(ast::make_list(ExprKind::List, @1.begin, std::move($2))); }
  | if_expr         { $$ = std::move($1); }
  | for_expr        { $$ = std::move($1); }
  ;

qualname:
    Ident                 { $$ = std::move($1); }
  | qualname "." Ident    { $$ = std::move($1) + "." + $3; }
  ;

args:
    %empty            { }
  | arg_list          { $$ = std::move($1); }
  | arg_list ","      { $$ = std::move($1); }
  ;

arg_list:
    arg                { $$ = one(std::move($1)); }
  | arg_list "," arg   { $$ = append(std::move($1), std::move($3)); }
  ;

arg:
    expr             { $$.value = std::move($1); }
  | Ident "=" expr   { $$.keyword = std::move($1); $$.keyword_loc = @1.begin; $$.value = std::move($3); }
  ;

%%

namespace dsc::lang::detail {

namespace {

// The token declarations mirror DSC_TOKEN_KINDS, End being Bison's end-of-file symbol.
static_assert(Parser::symbol_kind::S_Ident == 3 &&
              static_cast<int>(Parser::symbol_kind::S_Bang) == 2 + static_cast<int>(TokenKind::Bang));

TokenKind token_kind_of(Parser::symbol_kind_type k) {
  int i = static_cast<int>(k) - 2;
  if (i < 1 || i > static_cast<int>(TokenKind::Bang)) return TokenKind::End;
  return static_cast<TokenKind>(i);
}

Parser::token_kind_type bison_token(TokenKind k) {
  switch (k) {
#define DSC_TOKEN_CASE(Name, Spelling)                                                             \
  case TokenKind::Name:                                                                            \
    return Parser::token::Name;
    DSC_TOKEN_KINDS(DSC_TOKEN_CASE)
#undef DSC_TOKEN_CASE
  }
  return Parser::token::End;
}

bool is_bracket_open(TokenKind k) {
  return k == TokenKind::LParen || k == TokenKind::LBracket || k == TokenKind::LBrace;
}
bool is_bracket_close(TokenKind k) {
  return k == TokenKind::RParen || k == TokenKind::RBracket || k == TokenKind::RBrace;
}

// Describes the expected tokens, folding the common sets into words: "an expression",
// "a statement", "a declaration". Operators that would merely continue an expression are left
// out: they are never what the user meant to write next.
std::string describe_expected(std::vector<TokenKind> kinds) {
  auto has = [&](TokenKind k) {
    return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
  };
  auto has_all = [&](std::initializer_list<TokenKind> ks) {
    for (TokenKind k : ks)
      if (!has(k)) return false;
    return true;
  };
  auto drop = [&](std::initializer_list<TokenKind> ks) {
    for (TokenKind k : ks) kinds.erase(std::remove(kinds.begin(), kinds.end(), k), kinds.end());
  };
  std::vector<std::string> words;
  if (has(TokenKind::Plus) && has(TokenKind::Star)) {
    drop({TokenKind::Plus, TokenKind::Minus, TokenKind::Star, TokenKind::Slash, TokenKind::Percent,
          TokenKind::EqEq, TokenKind::NotEq, TokenKind::Less, TokenKind::LessEq, TokenKind::Greater,
          TokenKind::GreaterEq, TokenKind::AndAnd, TokenKind::OrOr, TokenKind::Dot,
          TokenKind::LBracket, TokenKind::LParen});
  }
  // `(`, `[` and `-` may be missing from the set where they would continue the expression
  // before (see LET_VALUE in the grammar), so they do not decide.
  if (has_all({TokenKind::Ident, TokenKind::Int, TokenKind::Float, TokenKind::String,
               TokenKind::KwTrue, TokenKind::KwFalse, TokenKind::Bang, TokenKind::KwIf})) {
    words.push_back("an expression");
    drop({TokenKind::Ident, TokenKind::Int, TokenKind::Float, TokenKind::String, TokenKind::KwTrue,
          TokenKind::KwFalse, TokenKind::LParen, TokenKind::LBracket, TokenKind::Minus,
          TokenKind::Bang, TokenKind::KwIf, TokenKind::KwFor, TokenKind::Question,
          TokenKind::KwWhere});
  }
  if (has_all({TokenKind::KwImport, TokenKind::KwFn, TokenKind::KwPrim, TokenKind::KwExtern})) {
    words.push_back("a declaration");
    drop({TokenKind::KwImport, TokenKind::KwFn, TokenKind::KwPrim, TokenKind::KwExtern});
  }
  if (has_all({TokenKind::KwLet, TokenKind::KwVar, TokenKind::KwFor, TokenKind::KwIf,
               TokenKind::KwAlloc, TokenKind::Ident})) {
    words.push_back("a statement");
    drop({TokenKind::KwLet, TokenKind::KwVar, TokenKind::KwFor, TokenKind::KwParallel,
          TokenKind::KwVectorize, TokenKind::KwUnroll, TokenKind::KwIf, TokenKind::KwAlloc,
          TokenKind::Ident});
  } else if (has_all({TokenKind::KwLet, TokenKind::KwReturn})) {
    words.push_back("a statement");
    drop({TokenKind::KwLet, TokenKind::KwReturn});
  }
  if (kinds.size() > 1 || !words.empty()) drop({TokenKind::Semi});
  // After a name in an argument list, `=` would make it a keyword argument: true, but never
  // the point when the list could also go on or end.
  if (has(TokenKind::Comma) && has(TokenKind::RParen)) drop({TokenKind::Assign});
  for (TokenKind k : kinds) {
    if (k == TokenKind::Ident) {
      words.push_back("a name");
    } else if (k == TokenKind::End) {
      words.push_back("end of file");
    } else if (k == TokenKind::Int) {
      words.push_back("an integer");
    } else if (k == TokenKind::Float || k == TokenKind::String) {
      words.push_back(std::string("a ") + token_kind_spelling(k));
    } else {
      words.push_back(std::string("'") + token_kind_spelling(k) + "'");
    }
  }
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

} // namespace

Parser::symbol_type ParseDriver::next_token() {
  for (;;) {
    if (stopped_) return Parser::make_End(ast::Span{last_.end, last_.end});
    size_t errors_before = diags_.error_count();
    last_ = lexer_.next();
    if (diags_.error_count() != errors_before) last_error_line_ = last_.loc.line;
    if (is_bracket_open(last_.kind) && ++bracket_depth_ > ast::kMaxNesting) {
      too_deep(last_.loc);
      stopped_ = true;
      continue;
    }
    if (is_bracket_close(last_.kind) && bracket_depth_ > 0) --bracket_depth_;
    break;
  }
  ast::Span at{last_.loc, last_.end};
  switch (last_.kind) {
  case TokenKind::Ident:
    return Parser::make_Ident(last_.value, at);
  case TokenKind::Int:
    return Parser::make_Int(last_.int_value, at);
  case TokenKind::Float:
    return Parser::make_Float(last_.float_value, at);
  case TokenKind::String:
    return Parser::make_String(last_.value, at);
  default:
    return Parser::symbol_type(bison_token(last_.kind), at);
  }
}

void ParseDriver::too_deep(SourceLoc loc) {
  if (too_deep_) return;
  too_deep_ = true;
  diags_.error(loc, "nesting is too deep")
      .notes.push_back(
          {SourceLoc{}, "expressions and blocks may nest at most " +
                            std::to_string(ast::kMaxNesting) + " levels deep"});
}

void ParseDriver::too_long(SourceLoc loc) {
  if (too_long_) return;
  too_long_ = true;
  diags_.error(loc, "chain of operators is too long")
      .notes.push_back({SourceLoc{}, "operators of one level (`+ -`, `* / %`, `&&`, `||`) may "
                                     "chain at most " +
                                         std::to_string(ast::kMaxChainLength) + " in a row"});
}

ast::ExprPtr ParseDriver::cap(ast::ExprPtr e) {
  if (e && e->chain_length > ast::kMaxChainLength) {
    too_long(e->loc);
    return ast::make_leaf(ast::ExprKind::Error, e->loc);
  }
  if (!e || e->height <= ast::kMaxNesting) return e;
  too_deep(e->loc);
  return ast::make_leaf(ast::ExprKind::Error, e->loc);
}

ast::StmtPtr ParseDriver::cap(ast::StmtPtr s) {
  if (!s || s->height <= ast::kMaxNesting) return s;
  too_deep(s->loc);
  return nullptr;
}

void ParseDriver::report_syntax_error(const Parser::context& ctx) {
  if (stopped_) return; // the input was cut off after a diagnostic; this is its echo
  SourceLoc at = ctx.location().begin;
  if (last_error_line_ != 0 && at.line == last_error_line_) return;
  last_error_line_ = at.line;

  Parser::symbol_kind_type expected[Parser::YYNTOKENS];
  int n = ctx.expected_tokens(expected, Parser::YYNTOKENS);
  std::vector<TokenKind> kinds;
  for (int i = 0; i < n; ++i) kinds.push_back(token_kind_of(expected[i]));
  std::string message;
  if (!kinds.empty()) message = "expected " + describe_expected(std::move(kinds)) + ", found ";
  else message = "unexpected ";
  message += describe_token(last_.kind, last_.text);
  diags_.error(at, std::move(message));
}

void Parser::error(const location_type& at, const std::string& message) {
  // Only Bison's own failures arrive here (memory exhausted); syntax errors go through
  // report_syntax_error.
  drv.diags().error(at.begin, message);
}

void Parser::report_syntax_error(const context& ctx) const { drv.report_syntax_error(ctx); }

} // namespace dsc::lang::detail

namespace dsc::lang {

std::optional<ast::Module> parse_ast(const SourceManager& sources, uint32_t file,
                                     DiagnosticEngine& diags) {
  detail::ParseDriver driver(sources.text(file), file, diags);
  detail::Parser parser(driver);
  int rc = parser.parse();
  if (rc != 0) return std::nullopt;
  if (!driver.failed()) return std::move(driver.module);
  // Recovered from syntax errors: keep the declarations that contain none, so that resolution
  // still reports their own mistakes. A declaration spans from its keyword to the next one's.
  std::vector<uint32_t> error_lines;
  for (size_t i = driver.first_error(); i < diags.diagnostics().size(); ++i)
    if (diags.diagnostics()[i].loc.file == file) error_lines.push_back(diags.diagnostics()[i].loc.line);
  std::vector<ast::Decl>& decls = driver.module.decls;
  std::vector<ast::Decl> clean;
  for (size_t i = 0; i < decls.size(); ++i) {
    uint32_t begin = decls[i].loc.line;
    uint32_t end = i + 1 < decls.size() ? decls[i + 1].loc.line : UINT32_MAX;
    bool broken = std::any_of(error_lines.begin(), error_lines.end(),
                              [&](uint32_t line) { return begin <= line && line < end; });
    if (broken)
      driver.module.dropped.push_back(decls[i].name.name);
    else
      clean.push_back(std::move(decls[i]));
  }
  decls = std::move(clean);
  return std::move(driver.module);
}

} // namespace dsc::lang
