// torchtpu/ops/schema.hpp — aten operator schemas (`aten::cat(Tensor[] tensors, int dim=0) ->
// Tensor`) parsed into names, types and defaults; `Arg`, one argument of a run-time op call;
// `ArgReader`, which reads an op's non-tensor arguments by schema name (with the schema's
// defaults) and gathers its tensors. The operator library (ops/library.hpp) uses them to unpack
// model-graph nodes and to name arguments in errors.
//
// The schema grammar is PyTorch's (native_functions.yaml, `torch._C._jit_get_schemas_for_operator`):
//   name[.overload](Type name[=default], ..., *, kwarg-only args...) -> Type | (Type, ...)
// Types: Tensor, Tensor?, Tensor[], Tensor?[], Tensor(a), Tensor(a!), int, int?, int[], int[N], float,
// bool, str, Scalar, ScalarType?, SymInt[], and others kept by name.
#pragma once
#include <cctype>       // std::isalnum, std::isalpha, std::isdigit
#include <cstdint>      // int64_t
#include <exception>    // std::exception
#include <limits>       // std::numeric_limits
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <variant>      // std::variant, std::monostate
#include <vector>       // std::vector

#include "../core/any_tensor.hpp"  // AnyTensor
#include "../core/errors.hpp"      // ValueError, TypeError

namespace torchtpu::ops {

/// One argument of a run-time op call: what TorchScript's IValue holds for operator arguments
/// (None, bool, int, float, str, int list, float list, tensor, tensor list). Tensors are
/// `AnyTensor`s (any dtype, any device).
using Arg = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>,
                         std::vector<double>, AnyTensor, std::vector<AnyTensor>>;

/// The kind of an `Arg` as TorchScript prints types (`NoneType`, `int`, `Tensor[]`, ...).
inline const char* arg_kind_name(const Arg& a) {
  static const char* const names[] = {"NoneType", "bool", "int", "float", "str", "int[]", "float[]", "Tensor",
                                      "Tensor[]"};
  return names[a.index()];
}

/// One argument's type in a schema.
struct ArgType {
  /// The element type (`Other`: a type the library reads by name only, e.g. `Layout`).
  enum class Base { Tensor, Int, Float, Bool, Str, Scalar, ScalarType, Other };
  Base base = Base::Other;  ///< element type
  bool list = false;        ///< `T[]` or `T[N]`
  int fixed_len = 0;        ///< N of `T[N]` (0: any length)
  bool optional = false;    ///< `T?`
  bool elem_optional = false;  ///< `T?[]`: a list whose elements may be None (`Tensor?[] indices`)
  std::string text;         ///< as written, e.g. `int[2]`
};

/// One argument of a schema: its type, name, parsed default (if any), and whether it is
/// keyword-only (after `*`).
struct SchemaArg {
  ArgType type;                 ///< the type
  std::string name;             ///< the name
  std::optional<Arg> default_;  ///< the default, parsed (`None` → monostate)
  bool kwarg_only = false;      ///< after `*`
};

/// A parsed operator schema. **Errors:** `parse_schema` throws ValueError naming the schema
/// and the position of the first character it cannot read.
struct Schema {
  std::string name;                ///< `aten::cat`
  std::string overload;            ///< `out` of `aten::cat.out` (empty for none)
  std::vector<SchemaArg> args;     ///< arguments in order
  std::vector<ArgType> returns;    ///< return types in order

  /// The position of argument `n`, or -1.
  int index_of(std::string_view n) const {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].name == n) return static_cast<int>(i);
    return -1;
  }
  /// The number of arguments without a default (a call must pass at least these).
  size_t required() const {
    size_t r = 0;
    for (size_t i = 0; i < args.size(); ++i)
      if (!args[i].default_ && !args[i].kwarg_only) r = i + 1;
    return r;
  }
};

namespace detail {

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view s) : s_(s) {}

  Schema parse() {
    Schema r;
    r.name = ident("operator name", true);
    if (eat('.')) r.overload = ident("overload name", false);
    expect('(');
    bool kwarg_only = false;
    if (!eat(')')) {
      for (;;) {
        if (eat('*')) {
          kwarg_only = true;
        } else {
          SchemaArg a;
          a.type = type();
          a.name = ident("argument name", false);
          if (eat('=')) a.default_ = default_value(a.type);
          a.kwarg_only = kwarg_only;
          r.args.push_back(std::move(a));
        }
        if (eat(')')) break;
        expect(',');
      }
    }
    expect('-');
    expect('>');
    if (eat('(')) {
      if (!eat(')')) {
        for (;;) {
          r.returns.push_back(type());
          skip_ws();
          if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) != 0))
            ident("return name", false);  // named returns: (Tensor values, Tensor indices)
          if (eat(')')) break;
          expect(',');
        }
      }
    } else {
      r.returns.push_back(type());
    }
    skip_ws();
    if (pos_ != s_.size()) fail("end of schema");
    return r;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw ValueError("schema '" + std::string(s_) + "': expected " + what + " at position " + std::to_string(pos_));
  }
  void skip_ws() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) {
      const char what[] = {'\'', c, '\'', '\0'};
      fail(what);
    }
  }
  static bool ident_char(char c, bool ns) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || (ns && c == ':');
  }
  std::string ident(const char* what, bool ns) {
    skip_ws();
    const size_t b = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_], ns)) ++pos_;
    if (b == pos_) fail(what);
    return std::string(s_.substr(b, pos_ - b));
  }

  ArgType type() {
    skip_ws();
    const size_t b = pos_;
    ArgType t;
    const std::string base = ident("type", false);
    if (base == "Tensor") t.base = ArgType::Base::Tensor;
    else if (base == "int" || base == "SymInt") t.base = ArgType::Base::Int;
    else if (base == "float") t.base = ArgType::Base::Float;
    else if (base == "bool") t.base = ArgType::Base::Bool;
    else if (base == "str") t.base = ArgType::Base::Str;
    else if (base == "Scalar") t.base = ArgType::Base::Scalar;
    else if (base == "ScalarType") t.base = ArgType::Base::ScalarType;
    if (pos_ < s_.size() && s_[pos_] == '(') {  // alias annotation: Tensor(a), Tensor(a!)
      while (pos_ < s_.size() && s_[pos_] != ')') ++pos_;
      expect(')');
    }
    if (pos_ + 1 < s_.size() && s_[pos_] == '?' && s_[pos_ + 1] == '[') {  // `Tensor?[]`: optional elements
      ++pos_;
      t.elem_optional = true;
    }
    if (pos_ < s_.size() && s_[pos_] == '[') {
      ++pos_;
      t.list = true;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0)
        t.fixed_len = t.fixed_len * 10 + (s_[pos_++] - '0');
      expect(']');
    }
    if (pos_ < s_.size() && s_[pos_] == '?') {
      ++pos_;
      t.optional = true;
    }
    t.text = std::string(s_.substr(b, pos_ - b));
    return t;
  }

  // A number as written in a schema default: an int, a float (1e-05, 0.5, -inf, inf, nan).
  Arg number(const std::string& w) {
    if (w == "inf") return Arg(std::numeric_limits<double>::infinity());
    if (w == "-inf") return Arg(-std::numeric_limits<double>::infinity());
    if (w == "nan") return Arg(std::numeric_limits<double>::quiet_NaN());
    size_t used = 0;
    const bool is_int = w.find_first_of(".eE") == std::string::npos;
    try {
      if (is_int) {
        const int64_t v = std::stoll(w, &used);
        if (used == w.size()) return Arg(v);
      } else {
        const double v = std::stod(w, &used);
        if (used == w.size()) return Arg(v);
      }
    } catch (const std::exception&) {
    }
    fail("a number");
  }

  Arg default_value(const ArgType& t) {
    skip_ws();
    if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
      const char q = s_[pos_++];
      const size_t b = pos_;
      while (pos_ < s_.size() && s_[pos_] != q) ++pos_;
      if (pos_ == s_.size()) fail("closing quote");
      return Arg(std::string(s_.substr(b, pos_++ - b)));
    }
    if (pos_ < s_.size() && s_[pos_] == '[') {
      ++pos_;
      std::vector<std::string> words;
      while (!eat(']')) {
        words.push_back(word());
        eat(',');
      }
      if (t.base == ArgType::Base::Float) {
        std::vector<double> v;
        for (const auto& w : words) v.push_back(std::get<double>(as_double(number(w))));
        return Arg(std::move(v));
      }
      std::vector<int64_t> v;
      for (const auto& w : words) {
        const Arg n = number(w);
        if (!std::holds_alternative<int64_t>(n)) fail("an integer");
        v.push_back(std::get<int64_t>(n));
      }
      return Arg(std::move(v));
    }
    const std::string w = word();
    if (w == "None") return Arg();
    if (w == "True") return Arg(true);
    if (w == "False") return Arg(false);
    if (t.base == ArgType::Base::Other || t.base == ArgType::Base::ScalarType ||
        !(std::isdigit(static_cast<unsigned char>(w[0])) != 0 || w[0] == '-' || w == "inf" || w == "nan"))
      return Arg(w);  // an enum name (contiguous_format, long, mean)
    Arg n = number(w);
    if (t.list && std::holds_alternative<int64_t>(n))  // `int[2] stride=1` means [1, 1]
      return Arg(std::vector<int64_t>(static_cast<size_t>(t.fixed_len > 0 ? t.fixed_len : 1), std::get<int64_t>(n)));
    if (t.base == ArgType::Base::Float) return as_double(n);
    return n;
  }
  static Arg as_double(const Arg& n) {
    if (const auto* i = std::get_if<int64_t>(&n)) return Arg(static_cast<double>(*i));
    return n;
  }
  std::string word() {
    skip_ws();
    const size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ')' && s_[pos_] != ']' && s_[pos_] != ' ') ++pos_;
    if (b == pos_) fail("a default value");
    return std::string(s_.substr(b, pos_ - b));
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace detail

/// Parses an aten schema string (grammar above). **Errors:** ValueError naming the schema and
/// the position where it stops making sense.
inline Schema parse_schema(std::string_view s) { return detail::SchemaParser(s).parse(); }

/// Reads an op call's arguments by schema name: the value passed at the argument's position,
/// else the schema's default. Tensors are gathered separately (`tensors()`), in schema order.
///
/// **Errors:** ValueError when more arguments are passed than the schema has, or a required one
/// is missing; TypeError naming the op, the argument and both kinds when an argument has the
/// wrong kind (ints convert to float; a bool reads as an int only where an int is expected).
class ArgReader {
 public:
  /// Reads `args` (positional, as a TorchScript node passes them) against `schema`.
  ArgReader(const Schema& schema, std::span<const Arg> args) : schema_(schema), args_(args) {
    if (args.size() > schema.args.size())
      throw ValueError(schema.name + ": expected at most " + std::to_string(schema.args.size()) +
                       " arguments, got " + std::to_string(args.size()));
    if (args.size() < schema.required())
      throw ValueError(schema.name + ": expected at least " + std::to_string(schema.required()) +
                       " arguments, got " + std::to_string(args.size()) + " (missing '" +
                       schema.args[args.size()].name + "')");
  }

  /// The argument named `name` (passed or default; None when neither).
  const Arg& get(std::string_view name) const { return lookup(name, true); }
  /// True when `name` is None.
  bool is_none(std::string_view name) const { return std::holds_alternative<std::monostate>(lookup(name, false)); }
  /// Which passed arguments were read so far (bit `i`: position `i`, the first 64), through
  /// any accessor but `is_none`: what a caller that reads the arguments once (a model graph
  /// at load, jit/library_ops.hpp) checks to know a result depends on constants only.
  uint64_t read() const noexcept { return read_; }
  /// An int argument (a bool reads as 0/1).
  int64_t to_int(std::string_view name) const {
    const Arg& a = get(name);
    if (const auto* i = std::get_if<int64_t>(&a)) return *i;
    if (const auto* b = std::get_if<bool>(&a)) return *b ? 1 : 0;
    throw mismatch(name, "int", a);
  }
  /// A float argument (ints convert).
  double to_double(std::string_view name) const {
    const Arg& a = get(name);
    if (const auto* d = std::get_if<double>(&a)) return *d;
    if (const auto* i = std::get_if<int64_t>(&a)) return static_cast<double>(*i);
    if (const auto* b = std::get_if<bool>(&a)) return *b ? 1.0 : 0.0;
    throw mismatch(name, "float", a);
  }
  /// A bool argument.
  bool to_bool(std::string_view name) const {
    const Arg& a = get(name);
    if (const auto* b = std::get_if<bool>(&a)) return *b;
    throw mismatch(name, "bool", a);
  }
  /// A str argument.
  const std::string& str(std::string_view name) const {
    const Arg& a = get(name);
    if (const auto* s = std::get_if<std::string>(&a)) return *s;
    throw mismatch(name, "str", a);
  }
  /// An int list (a single int repeats to the schema's fixed length, as `int[2]` allows).
  std::vector<int64_t> to_ints(std::string_view name) const {
    const Arg& a = get(name);
    if (const auto* l = std::get_if<std::vector<int64_t>>(&a)) return *l;
    if (const auto* i = std::get_if<int64_t>(&a)) {
      const int n = schema_.args[static_cast<size_t>(schema_.index_of(name))].type.fixed_len;
      return std::vector<int64_t>(static_cast<size_t>(n > 0 ? n : 1), *i);
    }
    throw mismatch(name, "int[]", a);
  }

  /// Every tensor argument in schema order, lists flattened; None for `Tensor?` (and a None
  /// element of `Tensor?[]`) gives an undefined AnyTensor. **Errors:** TypeError when a tensor argument holds something else (a
  /// list where the schema has one tensor, or one tensor where it has a list).
  std::vector<AnyTensor> tensors() const {
    std::vector<AnyTensor> r;
    for (const SchemaArg& s : schema_.args) {
      if (s.type.base != ArgType::Base::Tensor) continue;
      const Arg& a = get(s.name);
      const auto* t = std::get_if<AnyTensor>(&a);
      const auto* l = std::get_if<std::vector<AnyTensor>>(&a);
      if (t && !s.type.list) r.push_back(*t);
      else if (l && s.type.list) r.insert(r.end(), l->begin(), l->end());
      else if (std::holds_alternative<std::monostate>(a) && s.type.optional) r.emplace_back();
      else throw mismatch(s.name, s.type.text.c_str(), a);
    }
    return r;
  }

  /// The schema read against.
  const Schema& schema() const noexcept { return schema_; }

 private:
  const Arg& lookup(std::string_view name, bool track) const {
    const int i = schema_.index_of(name);
    if (i < 0) throw ValueError(schema_.name + ": internal: the schema has no argument '" + std::string(name) + "'");
    if (static_cast<size_t>(i) < args_.size()) {
      if (track && i < 64) read_ |= uint64_t{1} << i;
      return args_[static_cast<size_t>(i)];
    }
    const auto& d = schema_.args[static_cast<size_t>(i)].default_;
    static const Arg none;
    return d ? *d : none;
  }

  TypeError mismatch(std::string_view name, const char* want, const Arg& got) const {
    return TypeError(schema_.name + ": argument '" + std::string(name) + "' must be " + want + ", got " +
                     arg_kind_name(got));
  }

  const Schema& schema_;
  std::span<const Arg> args_;
  mutable uint64_t read_ = 0;  ///< see read()
};

}  // namespace torchtpu::ops
