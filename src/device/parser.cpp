// src/device/parser.cpp — parses the StableHLO MLIR text the emulator accepts (generic form
// and the pretty forms jax prints for the supported ops) into an emulator::Program.
#include <algorithm>  // std::min, std::max
#include <cctype>   // std::isdigit, std::isalnum, std::isxdigit
#include <map>      // std::map
#include <cstdlib>  // std::strtod, std::strtoull
#include <set>      // std::set
#include <string>   // std::string
#include <unordered_map>  // std::unordered_map
#include <vector>   // std::vector

#include "emulator.hpp"  // Program, Op, Body, Attr, EmuError
#include "kernels.hpp"   // plan_sort

namespace torchtpu::emulator {
namespace {

struct Token {
  enum Kind { Word, Value, Symbol, Caret, Hash, Str, Punct, End } kind = End;
  std::string text;
  int line = 0;
};

std::vector<Token> tokenize(const std::string& src) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0;
  const size_t n = src.size();
  auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
  };
  while (i < n) {
    const char c = src[i];
    if (c == '\n') { ++line; ++i; continue; }
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    if (c == '/' && i + 1 < n && src[i + 1] == '/') {  // comment
      while (i < n && src[i] != '\n') ++i;
      continue;
    }
    Token t;
    t.line = line;
    if (c == '"') {
      size_t j = i + 1;
      std::string s;
      while (j < n && src[j] != '"') {
        if (src[j] == '\\' && j + 1 < n) { s += src[j + 1]; j += 2; continue; }
        if (src[j] == '\n') ++line;
        s += src[j++];
      }
      if (j >= n) throw EmuError(kInvalidArgument, "line " + std::to_string(t.line) + ": unterminated string");
      t.kind = Token::Str;
      t.text = s;
      i = j + 1;
    } else if (c == '%' || c == '@' || c == '^' || c == '#' || c == '!') {
      size_t j = i + 1;
      while (j < n && (word_char(src[j]) || src[j] == '-' || (c == '%' && (src[j] == '#' )))) ++j;
      t.kind = c == '%' ? Token::Value : c == '@' ? Token::Symbol : c == '^' ? Token::Caret : Token::Hash;
      t.text = src.substr(i, j - i);
      i = j;
    } else if (c == '-' && i + 1 < n && src[i + 1] == '>') {
      t.kind = Token::Punct;
      t.text = "->";
      i += 2;
    } else if (word_char(c) || (c == '-' && i + 1 < n && (std::isdigit(static_cast<unsigned char>(src[i + 1])) || src[i + 1] == '.'))) {
      size_t j = i + 1;
      const bool numeric = std::isdigit(static_cast<unsigned char>(c)) || c == '-';
      while (j < n) {
        if (word_char(src[j])) { ++j; continue; }
        if (numeric && (src[j] == '+' || src[j] == '-') && (src[j - 1] == 'e' || src[j - 1] == 'E') &&
            src.compare(i, 2, "0x") != 0) { ++j; continue; }
        break;
      }
      t.kind = Token::Word;
      t.text = src.substr(i, j - i);
      i = j;
    } else {
      t.kind = Token::Punct;
      t.text = std::string(1, c);
      ++i;
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.kind = Token::End;
  end.line = line;
  out.push_back(end);
  return out;
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  size_t k = s[0] == '-' ? 1 : 0;
  return k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) || s[k] == '.');
}

ET parse_et(const std::string& s, int line) {
  static const std::unordered_map<std::string, ET> kTypes = {
      {"i1", ET::PRED},  {"i8", ET::S8},    {"i16", ET::S16},   {"i32", ET::S32}, {"i64", ET::S64},
      {"ui8", ET::U8},   {"ui16", ET::U16}, {"ui32", ET::U32},  {"ui64", ET::U64}, {"f16", ET::F16},
      {"bf16", ET::BF16}, {"f32", ET::F32}, {"f64", ET::F64}};
  auto it = kTypes.find(s);
  if (it == kTypes.end())
    throw EmuError(kUnimplemented, "line " + std::to_string(line) + ": element type '" + s +
                                       "' is not supported by the TPU emulator");
  return it->second;
}

/// Builtin reducer ops a reduce body may apply.
bool is_reducer(const std::string& s) {
  return s == "stablehlo.add" || s == "stablehlo.maximum" || s == "stablehlo.minimum" ||
         s == "stablehlo.multiply" || s == "stablehlo.and" || s == "stablehlo.or";
}

const std::set<std::string>& supported_ops() {
  static const std::set<std::string> ops = {
      "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
      "and", "or", "xor", "not", "negate", "abs", "sign", "exponential", "exponential_minus_one",
      "log", "log_plus_one", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan",
      "floor", "ceil", "round_nearest_even", "round_nearest_afz", "is_finite", "compare", "select",
      "clamp", "convert", "broadcast_in_dim", "reshape", "transpose", "slice", "concatenate", "pad",
      "iota", "constant", "dot_general", "dot", "reduce", "reduce_window", "convolution", "reverse", "sort"};
  return ops;
}

class Parser {
 public:
  explicit Parser(const std::string& text) : toks_(tokenize(text)) {}

  std::shared_ptr<const Program> parse() {
    auto prog = std::make_shared<Program>();
    root_ = prog_ = prog.get();
    // top-level attribute aliases (#loc = loc(...)) are skipped line by line
    while (peek().kind == Token::Hash && peek(1).text == "=") skip_line();
    bool wrapped = false;
    if (peek().kind == Token::Word && peek().text == "module") {
      wrapped = true;
      next();
      if (peek().kind == Token::Symbol) next();
      if (peek().text == "attributes") { next(); parse_dict(); }
      expect("{");
    }
    bool found_main = false;
    while (!(wrapped && peek().text == "}") && peek().kind != Token::End) {
      if (peek().kind == Token::Hash && peek(1).text == "=") { skip_line(); continue; }
      if (peek().text != "func.func")
        fail(kInvalidArgument, "expected func.func, found '" + peek().text + "'");
      found_main |= parse_func();
    }
    if (wrapped) expect("}");
    skip_locs();
    while (peek().kind == Token::Hash && peek(1).text == "=") skip_line();
    if (peek().kind != Token::End) fail(kInvalidArgument, "unexpected '" + peek().text + "' after the module");
    if (!found_main) fail(kInvalidArgument, "the module has no func.func @main");
    check_calls(*prog, 0);
    return prog;
  }

 private:
  /// Bounds the recursion of nested attributes and regions (deeply nested text would
  /// otherwise overflow the stack): at most kMaxNesting levels, then INVALID_ARGUMENT.
  static constexpr int kMaxNesting = 256;
  struct NestGuard {
    NestGuard(Parser& p, const char* what) : p_(p) {
      if (++p_.depth_ > kMaxNesting) {
        --p_.depth_;
        p_.fail(kInvalidArgument, std::string(what) + " nest deeper than " + std::to_string(kMaxNesting) + " levels");
      }
    }
    ~NestGuard() { --p_.depth_; }
    NestGuard(const NestGuard&) = delete;
    NestGuard& operator=(const NestGuard&) = delete;
    Parser& p_;
  };

  // ---- token helpers ----
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  [[noreturn]] void fail(int code, const std::string& msg) const {
    throw EmuError(code, "TPU emulator: line " + std::to_string(peek().line) + ": " + msg);
  }
  [[noreturn]] void fail_op(int code, const std::string& op, int line, const std::string& msg) const {
    throw EmuError(code, "TPU emulator: line " + std::to_string(line) + ": " + op + ": " + msg);
  }
  void expect(const std::string& p) {
    if (peek().text != p || peek().kind == Token::Str)
      fail(kInvalidArgument, "expected '" + p + "', found '" + (peek().kind == Token::End ? std::string("end of text") : peek().text) + "'");
    next();
  }
  bool accept(const std::string& p) {
    if (peek().text == p && peek().kind != Token::Str) { next(); return true; }
    return false;
  }
  void skip_line() {
    const int line = peek().line;
    while (peek().kind != Token::End && peek().line == line) next();
  }
  void skip_balanced() {  // at an opening ( [ { <; skips to its partner
    int depth = 0;
    do {
      const std::string& t = peek().text;
      if (peek().kind == Token::Punct && (t == "(" || t == "[" || t == "{" || t == "<")) ++depth;
      if (peek().kind == Token::Punct && (t == ")" || t == "]" || t == "}" || t == ">")) --depth;
      if (peek().kind == Token::End) fail(kInvalidArgument, "unbalanced brackets");
      next();
    } while (depth > 0);
  }
  void skip_locs() {
    while (peek().kind == Token::Word && peek().text == "loc" && peek(1).text == "(") {
      next();
      skip_balanced();
    }
  }

  // ---- types ----
  TensorType parse_type() {
    const int line = peek().line;
    if (peek().text != "tensor") {
      if (peek().kind == Token::Word && peek().text.size() >= 2 && !is_number(peek().text)) {
        // a bare element type is not a tensor; report it clearly
      }
      fail(kUnimplemented, "type '" + peek().text + "' is not supported (only ranked static tensor<...>)");
    }
    next();
    expect("<");
    TensorType t;
    std::string spec;
    while (peek().text != ">" && peek().text != "," && peek().kind != Token::End) {
      if (peek().text == "?") fail(kUnimplemented, "dynamic dimensions are not supported");
      if (peek().kind != Token::Word) fail(kUnimplemented, "tensor type element '" + peek().text + "' is not supported");
      spec += next().text;
    }
    if (peek().text == ",") {  // encoding such as #stablehlo.bounds<...>: skip it
      next();
      while (peek().text != ">" && peek().kind != Token::End) {
        if (peek().text == "<") skip_balanced(); else next();
      }
    }
    expect(">");
    size_t start = 0;
    while (true) {
      const size_t x = spec.find('x', start);
      // the element type itself may not contain 'x'; dims are digits before each 'x'
      if (x == std::string::npos || !std::isdigit(static_cast<unsigned char>(spec[start]))) break;
      const std::string d = spec.substr(start, x - start);
      for (char ch : d)
        if (!std::isdigit(static_cast<unsigned char>(ch)))
          throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(line) + ": bad tensor type '" + spec + "'");
      t.dims.push_back(std::stoll(d));
      start = x + 1;
    }
    t.et = parse_et(spec.substr(start), line);
    try {
      (void)t.numel();  // a type whose size overflows is rejected here, not when a kernel indexes it
    } catch (const EmuError& e) {
      throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(line) + ": " + e.msg);
    }
    return t;
  }
  /// After ':' — either `type`, `type, type, ...`, `type -> type` or `(types) -> result(s)`.
  std::vector<TensorType> parse_signature_results() {
    std::vector<TensorType> results;
    if (peek().text == "(") {
      next();
      while (peek().text != ")") {
        parse_type();
        skip_arg_attrs();
        if (!accept(",")) break;
      }
      expect(")");
      expect("->");
      return parse_result_types();
    }
    std::vector<TensorType> ts{parse_type()};
    while (accept(",")) ts.push_back(parse_type());
    if (accept("->")) return parse_result_types();
    return {ts.back()};
  }
  std::vector<TensorType> parse_result_types() {
    std::vector<TensorType> ts;
    if (accept("(")) {
      while (peek().text != ")") {
        ts.push_back(parse_type());
        skip_arg_attrs();
        if (!accept(",")) break;
      }
      expect(")");
    } else {
      ts.push_back(parse_type());
    }
    return ts;
  }
  void skip_arg_attrs() {
    if (peek().text == "{") skip_balanced();
    skip_locs();
  }

  // ---- attributes ----
  Attr parse_number() {
    Attr a;
    const std::string s = next().text;
    if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) {
      a.kind = Attr::Word;  // hex bit pattern; interpreted with the element type later
      a.s = s;
      a.i = static_cast<int64_t>(std::strtoull(s.c_str() + 2, nullptr, 16));
      return a;
    }
    if (s.find_first_of(".eE") != std::string::npos || s.find("inf") != std::string::npos ||
        s.find("nan") != std::string::npos) {
      a.kind = Attr::Float;
      a.f = std::strtod(s.c_str(), nullptr);
    } else {
      a.kind = Attr::Int;
      a.i = std::stoll(s);
      a.f = static_cast<double>(a.i);
    }
    return a;
  }
  Attr parse_attr() {
    const NestGuard guard(*this, "attributes");
    const Token& t = peek();
    Attr a;
    if (t.kind == Token::Punct && t.text == "[") {
      next();
      a.kind = Attr::List;
      while (peek().text != "]") {
        a.items.push_back(parse_attr());
        if (!accept(",")) break;
      }
      expect("]");
      return a;
    }
    if (t.kind == Token::Punct && t.text == "{") return parse_dict();
    if (t.kind == Token::Str || t.kind == Token::Symbol) {
      a.kind = Attr::Str;
      a.s = next().text;
      return a;
    }
    if (t.kind == Token::Hash) {
      const std::string name = next().text;
      if (!accept("<")) {
        a.kind = Attr::Word;
        a.s = name;
        return a;
      }
      if (name.find("conv") != std::string::npos && peek().text == "[") {
        a.kind = Attr::Conv;
        for (int part = 0; part < 3; ++part) {
          a.items.push_back(parse_attr());
          if (part == 0) {
            if (peek().text != "x" && !(peek().kind == Token::Word && peek().text == "x")) fail(kInvalidArgument, "expected 'x' in convolution dimension numbers");
            next();
          } else if (part == 1) {
            expect("->");
          }
        }
        expect(">");
        return a;
      }
      if (peek().kind == Token::Word && peek(1).kind == Token::Word && peek(2).text == ">") {
        a.kind = Attr::Enum;
        a.s = peek(1).text;  // e.g. #stablehlo<comparison_direction GT>
        next();
        next();
        expect(">");
        return a;
      }
      if (peek().kind == Token::Word && peek(1).text == ">") {
        a.kind = Attr::Enum;  // e.g. #stablehlo.precision<DEFAULT>
        a.s = next().text;
        expect(">");
        return a;
      }
      a.kind = Attr::Dict;  // #stablehlo.dot<k = v, ...>
      while (peek().text != ">") {
        const std::string key = next().text;
        Attr v;
        v.kind = Attr::Bool;
        v.i = 1;
        if (accept("=")) v = parse_attr();
        a.dict.push_back(NamedAttr{key, v});
        if (!accept(",")) break;
      }
      expect(">");
      return a;
    }
    if (t.kind == Token::Word) {
      if (is_number(t.text)) {
        a = parse_number();
        if (peek().text == ":" && peek(1).kind == Token::Word && peek(1).text != "tensor") {
          next();
          next();  // `1 : i64`
        }
        return a;
      }
      if (t.text == "true" || t.text == "false") {
        a.kind = Attr::Bool;
        a.i = next().text == "true";
        return a;
      }
      if (t.text == "array") {
        next();
        expect("<");
        next();  // element type
        a.kind = Attr::List;
        if (accept(":")) {
          while (peek().text != ">") {
            a.items.push_back(parse_attr());
            if (!accept(",")) break;
          }
        }
        expect(">");
        return a;
      }
      if (t.text == "dense") {
        next();
        expect("<");
        a.kind = Attr::Dense;
        if (peek().kind == Token::Str) {  // dense<"0x0000803F..."> : raw little-endian bytes
          a.s = next().text;
          if (a.s.size() < 2 || a.s.compare(0, 2, "0x") != 0 || a.s.size() % 2 != 0)
            fail(kInvalidArgument, "a string dense constant must be \"0x\" followed by hex bytes");
          for (size_t i = 2; i < a.s.size(); ++i)
            if (!std::isxdigit(static_cast<unsigned char>(a.s[i]))) fail(kInvalidArgument, "bad hex digit in a dense constant");
        } else if (peek().text != ">") {
          a.items.push_back(parse_attr());
        }
        expect(">");
        expect(":");
        a.type = parse_type();
        return a;
      }
      if (t.text == "dense_resource") fail(kUnimplemented, "dense_resource constants are not supported");
      a.kind = Attr::Word;
      a.s = next().text;
      return a;
    }
    fail(kInvalidArgument, "unexpected '" + t.text + "' in an attribute");
  }
  Attr parse_dict() {
    expect("{");
    Attr a;
    a.kind = Attr::Dict;
    while (peek().text != "}") {
      if (peek().kind != Token::Word && peek().kind != Token::Str) fail(kInvalidArgument, "expected an attribute name, found '" + peek().text + "'");
      const std::string key = next().text;
      Attr v;
      v.kind = Attr::Bool;
      v.i = 1;
      if (accept("=")) v = parse_attr();
      a.dict.push_back(NamedAttr{key, v});
      if (!accept(",")) break;
    }
    expect("}");
    return a;
  }

  // ---- SSA names ----
  int define(const std::string& name, int line) {
    if (scope_.count(name))
      throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(line) + ": redefinition of " + name);
    const int slot = prog_->num_slots++;
    scope_[name] = slot;
    return slot;
  }
  /// `name` as a second name of `slot` (a result group's %x for %x#0).
  void alias(const std::string& name, int slot, int line) {
    if (scope_.count(name))
      throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(line) + ": redefinition of " + name);
    scope_[name] = slot;
  }
  int use(const Token& t) {
    if (t.kind != Token::Value)
      throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(t.line) + ": expected an SSA value, found '" + t.text + "'");
    auto it = scope_.find(t.text);
    if (it == scope_.end() && t.text.size() > 2 && t.text.compare(t.text.size() - 2, 2, "#0") == 0)
      it = scope_.find(t.text.substr(0, t.text.size() - 2));  // %x#0 is %x
    if (it == scope_.end())
      throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(t.line) + ": use of undefined value " + t.text);
    return it->second;
  }

  // ---- functions ----
  /// Parses one func.func. @main goes into the root program; other functions into
  /// `root->functions` (run when @main calls them). Returns true for @main.
  bool parse_func() {
    expect("func.func");
    while (peek().text == "public" || peek().text == "private" || peek().text == "nested") next();
    if (peek().kind != Token::Symbol) fail(kInvalidArgument, "expected a function name");
    const std::string fname = next().text;
    const bool is_main = fname == "@main";
    if (is_main && seen_main_) fail(kInvalidArgument, "two functions named @main");
    if (!is_main && root_->functions.count(fname)) fail(kInvalidArgument, "two functions named " + fname);
    std::shared_ptr<Program> callee;
    if (is_main) {
      seen_main_ = true;
      prog_ = root_;
    } else {
      callee = std::make_shared<Program>();
      prog_ = callee.get();
    }
    scope_.clear();
    slot_types_.clear();
    expect("(");
    while (peek().text != ")") {
      const Token& v = next();
      if (v.kind != Token::Value) fail(kInvalidArgument, "expected a parameter name");
      expect(":");
      prog_->params.push_back(parse_type());
      prog_->param_slots.push_back(define(v.text, v.line));
      slot_types_[prog_->param_slots.back()] = prog_->params.back();
      skip_arg_attrs();
      if (!accept(",")) break;
    }
    expect(")");
    if (accept("->")) prog_->results = parse_result_types();
    if (accept("attributes")) parse_dict();
    expect("{");
    bool returned = false;
    while (peek().text != "}") {
      if (peek().kind == Token::End) fail(kInvalidArgument, "unterminated function body");
      if (returned) fail(kInvalidArgument, "operation after return");
      returned = parse_statement(prog_->ops, &prog_->result_slots);
    }
    expect("}");
    if (!returned) fail(kInvalidArgument, fname + " has no return");
    if (prog_->result_slots.size() != prog_->results.size())
      fail(kInvalidArgument, fname + " returns " + std::to_string(prog_->result_slots.size()) +
                                 " values but declares " + std::to_string(prog_->results.size()) + " results");
    for (size_t i = 0; i < prog_->results.size(); ++i)
      if (!(slot_types_[prog_->result_slots[i]] == prog_->results[i]))
        fail(kInvalidArgument, "return value " + std::to_string(i) + " has type " +
                                   slot_types_[prog_->result_slots[i]].str() + " but " + fname + " declares " +
                                   prog_->results[i].str());
    skip_locs();
    plan_fusion(*prog_);
    if (callee) root_->functions[fname] = std::move(callee);
    prog_ = root_;
    return is_main;
  }

  /// `call @f(%a, %b) : (T, T) -> R` (also `func.call`); the callee is checked after parsing.
  void parse_call(Op& op) {
    op.name = "func.call";
    if (peek().kind != Token::Symbol) fail(kInvalidArgument, "expected a callee name after call");
    Attr callee;
    callee.kind = Attr::Str;
    callee.s = next().text;
    op.attrs["callee"] = callee;
    expect("(");
    while (peek().text != ")") {
      op.operands.push_back(use(next()));
      if (!accept(",")) break;
    }
    expect(")");
    if (peek().text == "{") parse_dict();
    expect(":");
    op.result_types = parse_signature_results();
  }

  /// Parses one statement into `ops`; returns true for a return (whose slots go to `ret`).
  bool parse_statement(std::vector<Op>& ops, std::vector<int>* ret) {
    const int line = peek().line;
    const std::string& head = peek().text;
    if (peek().kind == Token::Word && (head == "return" || head == "func.return" || head == "stablehlo.return")) {
      next();
      while (peek().kind == Token::Value) {
        ret->push_back(use(next()));
        if (!accept(",")) break;
      }
      if (accept(":")) {
        parse_type();
        while (accept(",")) parse_type();
      }
      skip_locs();
      return true;
    }
    if (peek().kind == Token::Str && (head == "func.return" || head == "stablehlo.return")) {
      next();
      expect("(");
      while (peek().kind == Token::Value) {
        ret->push_back(use(next()));
        if (!accept(",")) break;
      }
      expect(")");
      expect(":");
      skip_balanced();
      expect("->");
      skip_balanced();
      skip_locs();
      return true;
    }
    // Results: `%x`, or a result group `%x:N` whose values are %x#0 ... %x#(N-1) (%x is %x#0).
    std::vector<Token> names;
    std::vector<int> counts;  // per name: its group size, or 0 for a plain `%x`
    size_t total = 0;
    while (peek().kind == Token::Value) {
      names.push_back(next());
      int count = 0;
      if (accept(":")) {
        const Token& c = next();
        const bool digits = c.kind == Token::Word && !c.text.empty() && c.text.size() <= 6 &&
                            c.text.find_first_not_of("0123456789") == std::string::npos;
        count = digits ? std::stoi(c.text) : 0;
        if (count < 1)
          fail_op(kInvalidArgument, names.back().text, line, "expected a result count >= 1 after ':', found '" + c.text + "'");
      }
      counts.push_back(count);
      total += static_cast<size_t>(std::max(count, 1));
      if (!accept(",")) break;
    }
    if (names.empty()) fail(kInvalidArgument, "expected an operation, found '" + head + "'");
    expect("=");
    const bool names_sort = (peek().kind == Token::Str || peek().kind == Token::Word) &&
                            (peek().text == "stablehlo.sort" || peek().text == "mhlo.sort");
    if (total != 1 && !names_sort)
      fail_op(kUnimplemented, names[0].text, line, "operations with several results are not supported (only stablehlo.sort)");
    Op op;
    op.line = peek().line;
    if (peek().kind == Token::Word && (peek().text == "call" || peek().text == "func.call")) {
      next();
      parse_call(op);
    } else if (peek().kind == Token::Str && peek().text == "func.call") {
      next();
      expect("(");
      while (peek().text != ")") {
        op.operands.push_back(use(next()));
        if (!accept(",")) break;
      }
      expect(")");
      Attr d = parse_dict();
      const Attr* callee = d.get("callee");
      if (!callee) fail(kInvalidArgument, "func.call needs a callee");
      op.name = "func.call";
      op.attrs["callee"] = *callee;
      expect(":");
      op.result_types = parse_signature_results();
    } else if (peek().kind == Token::Str) parse_generic(op);
    else if (peek().kind == Token::Word) parse_pretty(op);
    else fail(kInvalidArgument, "expected an operation name, found '" + peek().text + "'");
    skip_locs();
    if (op.result_types.size() != total) {
      if (total == 1) fail_op(kInvalidArgument, op.name, op.line, "expected exactly one result type");
      fail_op(kInvalidArgument, op.name, op.line, "defines " + std::to_string(total) + " results but declares " +
                                                      std::to_string(op.result_types.size()) + " result types");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (counts[i] == 0) {
        op.results.push_back(define(names[i].text, names[i].line));
        continue;
      }
      const size_t first = op.results.size();
      for (int k = 0; k < counts[i]; ++k)
        op.results.push_back(define(names[i].text + "#" + std::to_string(k), names[i].line));
      alias(names[i].text, op.results[first], names[i].line);
    }
    for (size_t k = 0; k < op.results.size(); ++k) slot_types_[op.results[k]] = op.result_types[k];
    ops.push_back(std::move(op));
    return false;
  }

  void check_supported(const std::string& name, int line) const {
    if (name == "chlo.erf") return;
    if (name.rfind("stablehlo.", 0) == 0 && supported_ops().count(name.substr(10))) return;
    if (name.rfind("mhlo.", 0) == 0 && supported_ops().count(name.substr(5))) return;
    throw EmuError(kUnimplemented, "TPU emulator: line " + std::to_string(line) + ": operation '" + name +
                                       "' is not supported by the TPU emulator (docs/devices.md lists the supported ops)");
  }

  void parse_generic(Op& op) {
    op.name = next().text;
    if (op.name.rfind("mhlo.", 0) == 0) op.name = "stablehlo." + op.name.substr(5);
    check_supported(op.name, op.line);
    expect("(");
    while (peek().text != ")") {
      op.operands.push_back(use(next()));
      if (!accept(",")) break;
    }
    expect(")");
    if (peek().text == "<" && peek(1).text == "{") {  // properties <{...}>
      next();
      Attr d = parse_dict();
      for (auto& kv : d.dict) op.attrs[kv.first] = kv.second;
      expect(">");
    }
    const bool sort = op.name == "stablehlo.sort";
    if (peek().text == "(" && peek(1).text == "{") {  // regions
      next();
      if (sort) {
        parse_comparator(op);
        if (peek().text == ",") fail_op(kInvalidArgument, op.name, op.line, "takes one region (its comparator)");
      } else {
        parse_region(op);
        while (accept(",")) parse_region(op);
      }
      expect(")");
    }
    if (peek().text == "{") {
      Attr d = parse_dict();
      for (auto& kv : d.dict) op.attrs[kv.first] = kv.second;
    }
    expect(":");
    op.result_types = parse_signature_results();
    if (sort) {  // checked now (compile time), as XLA's verifier would
      if (!op.body) fail_op(kInvalidArgument, op.name, op.line, "needs a comparator region");
      std::vector<const TensorType*> in;
      for (int s : op.operands) {
        const auto it = slot_types_.find(s);
        if (it == slot_types_.end()) fail_op(kInternal, op.name, op.line, "operand without a type");
        in.push_back(&it->second);
      }
      (void)detail::plan_sort(op, in);
    }
    if (op.name == "stablehlo.constant") {
      const auto it = op.attrs.find("value");
      if (it == op.attrs.end() || it->second.kind != Attr::Dense)
        fail_op(kInvalidArgument, op.name, op.line, "needs a dense value attribute");
    }
  }

  /// `{ ^bb0(%a: tensor<f32>, %b: tensor<f32>): <one binary op> return }` → op.reducer.
  void parse_region(Op& op) {
    const NestGuard guard(*this, "regions");
    const int line = peek().line;
    expect("{");
    std::vector<int> args;
    auto saved = scope_;
    if (peek().kind == Token::Caret) {
      next();
      expect("(");
      while (peek().text != ")") {
        const Token& v = next();
        expect(":");
        const TensorType t = parse_type();
        args.push_back(define(v.text, v.line));
        slot_types_[args.back()] = t;
        skip_locs();
        if (!accept(",")) break;
      }
      expect(")");
      expect(":");
    }
    std::vector<Op> body;
    std::vector<int> ret;
    bool returned = false;
    while (peek().text != "}") {
      if (peek().kind == Token::End) fail(kInvalidArgument, "unterminated region");
      returned = parse_statement(body, &ret);
    }
    expect("}");
    scope_ = saved;
    if (!returned || args.size() != 2 || body.size() != 1 || ret.size() != 1 || body[0].operands.size() != 2 ||
        ret[0] != body[0].results[0] || !is_reducer(body[0].name) ||
        !((body[0].operands[0] == args[0] && body[0].operands[1] == args[1]) ||
          (body[0].operands[0] == args[1] && body[0].operands[1] == args[0])))
      fail_op(kUnimplemented, op.name, line,
              "only reduction bodies that apply one of add/maximum/minimum/multiply/and/or to their two "
              "arguments are supported");
    op.reducer = body[0].name;
  }

  /// A sort's comparator `{ ^bb0(%a0: T0, %b0: T0, ...): <ops> stablehlo.return %r : tensor<i1> }`
  /// → op.body, with slots of its own (renumbered from 0; the function's slot count is restored).
  /// Checked by plan_sort; here only that it uses nothing from outside and returns one value.
  void parse_comparator(Op& op) {
    const NestGuard guard(*this, "regions");
    const int line = peek().line;
    expect("{");
    auto body = std::make_shared<Body>();
    body->line = peek().line;
    const auto saved = scope_;
    const int base = prog_->num_slots;
    if (peek().kind != Token::Caret) fail_op(kInvalidArgument, op.name, line, "the comparator needs block arguments ^bb0(...)");
    next();
    expect("(");
    while (peek().text != ")") {
      const Token& v = next();
      if (v.kind != Token::Value) fail(kInvalidArgument, "expected a block argument, found '" + v.text + "'");
      expect(":");
      body->arg_types.push_back(parse_type());
      slot_types_[define(v.text, v.line)] = body->arg_types.back();
      skip_locs();
      if (!accept(",")) break;
    }
    expect(")");
    expect(":");
    std::vector<int> ret;
    bool returned = false;
    while (peek().text != "}") {
      if (peek().kind == Token::End) fail(kInvalidArgument, "unterminated region");
      if (returned) fail(kInvalidArgument, "operation after stablehlo.return");
      returned = parse_statement(body->ops, &ret);
    }
    expect("}");
    scope_ = saved;
    const int end = prog_->num_slots;
    prog_->num_slots = base;
    for (int s = base; s < end; ++s) slot_types_.erase(s);
    if (!returned || ret.size() != 1)
      fail_op(kInvalidArgument, op.name, line, "the comparator must end with stablehlo.return of one tensor<i1>");
    auto local = [&](int s, int at) {
      if (s < base || s >= end)
        fail_op(kInvalidArgument, op.name, at, "the comparator may use only its block arguments and its own values");
      return s - base;
    };
    for (Op& b : body->ops) {
      for (int& s : b.operands) s = local(s, b.line);
      for (int& s : b.results) s = local(s, b.line);
    }
    body->result = local(ret[0], line);
    body->num_slots = end - base;
    op.body = std::move(body);
  }

  void parse_operands(Op& op) {
    while (peek().kind == Token::Value) {
      op.operands.push_back(use(next()));
      if (!accept(",")) break;
    }
  }
  std::vector<int64_t> int_list() {
    Attr a = parse_attr();
    std::vector<int64_t> v;
    if (a.kind != Attr::List) fail(kInvalidArgument, "expected a list of integers");
    for (const auto& x : a.items) v.push_back(x.i);
    return v;
  }
  static Attr list_attr(const std::vector<int64_t>& v) {
    Attr a;
    a.kind = Attr::List;
    for (int64_t x : v) {
      Attr e;
      e.kind = Attr::Int;
      e.i = x;
      a.items.push_back(e);
    }
    return a;
  }

  void parse_pretty(Op& op) {
    op.name = next().text;
    if (op.name.rfind("mhlo.", 0) == 0) op.name = "stablehlo." + op.name.substr(5);
    check_supported(op.name, op.line);
    const std::string base = op.name.substr(op.name.find('.') + 1);
    if (base == "sort")  // stablehlo.sort has no pretty form
      fail_op(kUnimplemented, op.name, op.line, "only the generic form \"stablehlo.sort\"(...) ({ comparator }) is supported");
    if (base == "constant") {
      Attr v = parse_attr();
      if (v.kind != Attr::Dense) fail_op(kInvalidArgument, op.name, op.line, "expected dense<...>");
      op.result_types = {v.type};
      op.attrs["value"] = v;
      return;
    }
    if (base == "iota") {
      expect("dim");
      expect("=");
      op.attrs["iota_dimension"] = parse_attr();
      expect(":");
      op.result_types = parse_signature_results();
      return;
    }
    if (base == "compare") {
      Attr dir;
      dir.kind = Attr::Enum;
      dir.s = next().text;
      op.attrs["comparison_direction"] = dir;
      expect(",");
      parse_operands(op);
      if (peek().kind == Token::Word) {
        Attr ct;
        ct.kind = Attr::Enum;
        ct.s = next().text;
        op.attrs["compare_type"] = ct;
      }
    } else if (base == "reduce") {
      expect("(");
      op.operands.push_back(use(next()));
      expect("init");
      expect(":");
      op.operands.push_back(use(next()));
      expect(")");
      if (peek().text == ",") fail_op(kUnimplemented, op.name, op.line, "variadic reduce is not supported");
      if (accept("applies")) {
        op.reducer = next().text;
        if (!is_reducer(op.reducer))
          fail_op(kUnimplemented, op.name, op.line, "reducer '" + op.reducer + "' is not supported");
      }
      expect("across");
      expect("dimensions");
      expect("=");
      op.attrs["dimensions"] = parse_attr();
      expect(":");
      op.result_types = parse_signature_results();
      if (op.reducer.empty()) {
        expect("reducer");
        // reducer(%a: tensor<f32>, %b: tensor<f32>) { ... } — reuse the region parser
        expect("(");
        auto saved = scope_;
        std::vector<int> args;
        while (peek().text != ")") {
          const Token& v = next();
          expect(":");
          const TensorType t = parse_type();
          args.push_back(define(v.text, v.line));
          slot_types_[args.back()] = t;
          if (!accept(",")) break;
        }
        expect(")");
        expect("{");
        std::vector<Op> body;
        std::vector<int> ret;
        bool returned = false;
        while (peek().text != "}") {
          if (peek().kind == Token::End) fail(kInvalidArgument, "unterminated reducer");
          returned = parse_statement(body, &ret);
        }
        expect("}");
        scope_ = saved;
        if (!returned || args.size() != 2 || body.size() != 1 || ret.size() != 1 || !is_reducer(body[0].name) ||
            ret[0] != body[0].results[0])
          fail_op(kUnimplemented, op.name, op.line, "only single-op reducers are supported");
        op.reducer = body[0].name;
      }
      return;
    } else if (base == "convolution") {
      expect("(");
      parse_operands(op);
      expect(")");
      expect("dim_numbers");
      expect("=");
      Attr conv;
      conv.kind = Attr::Conv;
      conv.items.push_back(parse_attr());
      if (!(peek().kind == Token::Word && peek().text == "x")) fail(kInvalidArgument, "expected 'x' in dim_numbers");
      next();
      conv.items.push_back(parse_attr());
      expect("->");
      conv.items.push_back(parse_attr());
      op.attrs["dimension_numbers"] = conv;
      if (accept(",")) {
        expect("window");
        expect("=");
        Attr w = parse_dict();
        static const std::map<std::string, std::string> kNames = {{"stride", "window_strides"}, {"pad", "padding"},
                                                                  {"lhs_dilate", "lhs_dilation"}, {"rhs_dilate", "rhs_dilation"},
                                                                  {"reverse", "window_reversal"}};
        for (auto& kv : w.dict) {
          auto it = kNames.find(kv.first);
          op.attrs[it == kNames.end() ? kv.first : it->second] = kv.second;
        }
      }
      if (peek().text == "{") {
        Attr d = parse_dict();
        for (auto& kv : d.dict) op.attrs[kv.first] = kv.second;
      }
      expect(":");
      op.result_types = parse_signature_results();
      return;
    } else {
      parse_operands(op);
      if (base == "slice" && peek().text == "[") {  // %x [0:2, 1:3:1]
        next();
        std::vector<int64_t> st, li, sd;
        while (peek().text != "]") {
          st.push_back(std::stoll(next().text));
          expect(":");
          li.push_back(std::stoll(next().text));
          sd.push_back(accept(":") ? std::stoll(next().text) : 1);
          if (!accept(",")) break;
        }
        expect("]");
        op.attrs["start_indices"] = list_attr(st);
        op.attrs["limit_indices"] = list_attr(li);
        op.attrs["strides"] = list_attr(sd);
      }
      // keyword attributes: dims = [...], contracting_dims = [..] x [..], low = [...], ...
      while (peek().kind == Token::Word && peek(1).text == "=") {
        const std::string key = next().text;
        next();
        if (key == "dims") {
          op.attrs[base == "transpose" ? "permutation" : base == "reverse" ? "dimensions" : "broadcast_dimensions"] = parse_attr();
        } else if (key == "contracting_dims" || key == "batching_dims") {
          Attr l = parse_attr();
          if (!(peek().kind == Token::Word && peek().text == "x")) fail(kInvalidArgument, "expected 'x' in " + key);
          next();
          Attr r = parse_attr();
          const std::string k = key == "contracting_dims" ? "contracting_dimensions" : "batching_dimensions";
          op.attrs["lhs_" + k] = l;
          op.attrs["rhs_" + k] = r;
        } else if (key == "precision") {
          op.attrs["precision_config"] = parse_attr();
        } else if (key == "dim") {
          op.attrs["dimension"] = parse_attr();
        } else if (key == "low" || key == "high" || key == "interior") {
          op.attrs[(key == "low" ? "edge_padding_low" : key == "high" ? "edge_padding_high" : "interior_padding")] = parse_attr();
        } else if (key == "algorithm") {
          fail_op(kUnimplemented, op.name, op.line, "dot algorithms are not supported");
        } else {
          op.attrs[key] = parse_attr();
        }
        if (!accept(",")) break;
      }
    }
    if (peek().text == "{") {
      Attr d = parse_dict();
      for (auto& kv : d.dict) op.attrs[kv.first] = kv.second;
    }
    expect(":");
    op.result_types = parse_signature_results();
  }

  /// Every call names a known function with matching argument and result types.
  void check_calls(const Program& p, int depth) const {
    if (depth > 32) throw EmuError(kUnimplemented, "TPU emulator: function calls nest deeper than 32 (recursion?)");
    for (const Op& op : p.ops) {
      if (op.name != "func.call") continue;
      const std::string& name = op.attrs.at("callee").s;
      auto it = root_->functions.find(name);
      if (it == root_->functions.end())
        throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(op.line) + ": call to unknown function " + name);
      if (it->second->results.size() != 1 || !(it->second->results[0] == op.result_types[0]) ||
          it->second->params.size() != op.operands.size())
        throw EmuError(kInvalidArgument, "TPU emulator: line " + std::to_string(op.line) + ": call to " + name +
                                             " does not match its signature");
      check_calls(*it->second, depth + 1);
    }
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  Program* root_ = nullptr;
  Program* prog_ = nullptr;
  bool seen_main_ = false;
  int depth_ = 0;  // current nesting of parse_attr / parse_region (NestGuard)
  std::unordered_map<std::string, int> scope_;
  std::unordered_map<int, TensorType> slot_types_;

 public:
  const std::unordered_map<int, TensorType>& slot_types() const { return slot_types_; }
};

}  // namespace

std::shared_ptr<const Program> parse_program(const std::string& text) {
  if (text.size() >= 4 && text.compare(0, 4, "ML\xef\x52") == 0)
    throw EmuError(kUnimplemented, "TPU emulator: MLIR bytecode is not supported; send StableHLO as text");
  Parser p(text);
  return p.parse();
}

}  // namespace torchtpu::emulator
