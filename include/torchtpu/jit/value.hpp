// torchtpu/jit/value.hpp — `jit::Value`: one value of a run-time graph (None, bool, int, float,
// string, int list, float list, tensor, tensor list), as TorchScript's IValue has them. Tensors
// are `AnyTensor`s: any dtype, any device.
#pragma once
#include <cstdint>  // int64_t
#include <span>     // std::span
#include <string>   // std::string
#include <type_traits>  // std::is_integral_v
#include <utility>  // std::move
#include <vector>   // std::vector

#include "../core/any_tensor.hpp"  // AnyTensor
#include "../core/errors.hpp"      // TypeError
#include "../core/tensor.hpp"      // Tensor

namespace torchtpu::jit {

/// The tensor type of the ops that compute in float32 only so far (docs/design.md: they move to
/// the operator library, which has every dtype, family by family).
using FloatTensor = Tensor<float>;

/// One value flowing along a graph edge.
///
/// TorchScript's 0-dim "wrapped number" tensors made from ints by shape arithmetic
/// (`prim::NumToTensor`) are kept as `Int` values, so shape arithmetic stays exact int64
/// arithmetic. **Errors:** the typed accessors throw TypeError naming the expected and the
/// actual kind, and `what` (the op and argument) when given.
class Value {
 public:
  /// What a Value holds (TorchScript IValue kinds).
  enum class Kind { None, Bool, Int, Double, String, IntList, DoubleList, Tensor, TensorList };

  Value() = default;
  /// A bool.
  Value(bool b) : kind_(Kind::Bool), i_(b) {}                              // NOLINT: implicit, like IValue
  /// An int.
  Value(int64_t i) : kind_(Kind::Int), i_(i) {}                            // NOLINT
  /// An int.
  Value(int i) : kind_(Kind::Int), i_(i) {}                                // NOLINT
  /// A float (double).
  Value(double d) : kind_(Kind::Double), d_(d) {}                          // NOLINT
  /// A string.
  Value(std::string s) : kind_(Kind::String), s_(std::move(s)) {}          // NOLINT
  /// A list of ints.
  Value(std::vector<int64_t> l) : kind_(Kind::IntList), ints_(std::move(l)) {}      // NOLINT
  /// An int list of at most `max_rank` values held inside the Value (no heap allocation: the
  /// size lists a model builds on every run, prim::ListConstruct and aten::size).
  static Value int_list(const Dims& l) {
    Value v;
    v.kind_ = Kind::IntList;
    v.short_ints_ = l;
    v.ints_inline_ = true;
    return v;
  }
  /// A list of floats.
  Value(std::vector<double> l) : kind_(Kind::DoubleList), doubles_(std::move(l)) {}  // NOLINT
  /// A tensor of any dtype and device.
  Value(AnyTensor t) : kind_(Kind::Tensor), t_(std::move(t)) {}                      // NOLINT
  /// A typed tensor (held as an AnyTensor).
  template <element T, int Rank>
  Value(const Tensor<T, Rank>& t) : kind_(Kind::Tensor), t_(t) {}                    // NOLINT
  /// A list of tensors.
  Value(std::vector<AnyTensor> l) : kind_(Kind::TensorList), ts_(std::move(l)) {}    // NOLINT
  /// A list of float32 tensors.
  Value(const std::vector<FloatTensor>& l) : kind_(Kind::TensorList), ts_(l.begin(), l.end()) {}  // NOLINT

  /// Makes this value None. Keeps the room of a tensor list it held, so a list written into it
  /// again (`reset_tensor_list`) allocates nothing: a model's list-building nodes (cat's operand
  /// list, chunk's views) run without heap traffic from the second forward pass on.
  void reset() noexcept {
    kind_ = Kind::None;
    s_.clear();
    ints_.clear();
    ints_inline_ = false;
    doubles_.clear();
    t_ = AnyTensor();
    ts_.clear();
  }
  /// Makes this value an empty tensor list and returns the list to fill (its room kept from
  /// before, see `reset`).
  std::vector<AnyTensor>& reset_tensor_list() noexcept {
    reset();
    kind_ = Kind::TensorList;
    return ts_;
  }
  /// Moves the room of `from`'s tensor list (what it held is dropped) into this value's, which
  /// must be None (jit::Graph: a node's output slot lends its room to the node's result).
  void take_list_room(Value& from) noexcept {
    if (from.ts_.capacity() == 0) return;
    from.ts_.clear();
    ts_.clear();
    ts_.swap(from.ts_);
  }

  /// What the value holds.
  Kind kind() const noexcept { return kind_; }
  /// True for None.
  bool is_none() const noexcept { return kind() == Kind::None; }
  /// True for a tensor.
  bool is_tensor() const noexcept { return kind() == Kind::Tensor; }
  /// True for an int.
  bool is_int() const noexcept { return kind() == Kind::Int; }
  /// True for a float.
  bool is_double() const noexcept { return kind() == Kind::Double; }
  /// True for a bool.
  bool is_bool() const noexcept { return kind() == Kind::Bool; }
  /// An int, float or bool (a Python number).
  bool is_scalar() const noexcept { return is_int() || is_double() || is_bool(); }

  /// The tensor, any dtype. **Errors:** TypeError naming `what` for another kind.
  const AnyTensor& any(const char* what = "") const { return need(Kind::Tensor, what).t_; }
  /// The tensor as float32, for the ops that compute in float32 only so far.
  /// **Errors:** TypeError naming `what` for another kind, and for a tensor of another dtype
  /// ("aten::linear: expected a float32 tensor, got int64"): never a silent conversion.
  const FloatTensor& tensor(const char* what = "") const {
    const AnyTensor& t = any(what);
    if (const FloatTensor* f = t.get_if<float>()) return *f;
    throw TypeError(std::string(what[0] ? what : "value") + ": expected a float32 tensor, got " +
                    std::string(dtype_name(t.dtype())) + " (this op computes in float32 only so far)");
  }
  /// The bool. **Errors:** TypeError naming `what` for another kind.
  bool to_bool(const char* what = "") const { return need(Kind::Bool, what).i_ != 0; }
  /// The string. **Errors:** TypeError naming `what` for another kind.
  const std::string& str(const char* what = "") const { return need(Kind::String, what).s_; }
  /// The tensors, any dtype. **Errors:** TypeError naming `what` for another kind.
  const std::vector<AnyTensor>& anys(const char* what = "") const { return need(Kind::TensorList, what).ts_; }
  /// The tensors as float32 (a new vector of handles). **Errors:** TypeError naming `what` for
  /// another kind or a tensor of another dtype.
  std::vector<FloatTensor> tensors(const char* what = "") const {
    std::vector<FloatTensor> r;
    for (const AnyTensor& t : anys(what)) {
      if (const FloatTensor* f = t.get_if<float>()) r.push_back(*f);
      else
        throw TypeError(std::string(what[0] ? what : "value") + ": expected float32 tensors, got " +
                        std::string(dtype_name(t.dtype())) + " (this op computes in float32 only so far)");
    }
    return r;
  }
  /// An int (a bool counts as 0/1; a one-element tensor gives its value truncated toward 0).
  /// **Errors:** TypeError naming `what` for another kind; ValueError naming `what` for a
  /// tensor holding NaN, an infinity or a value outside int64's range [-2^63, 2^63) (the
  /// conversion is undefined in C++; Python's int() raises for NaN and infinities too).
  int64_t to_int(const char* what = "") const {
    if (is_int() || is_bool()) return i_;
    if (is_tensor() && t_.numel() == 1) {
      if (!is_floating(t_.dtype())) return int_element(t_);  // exact
      const double v = element(t_);
      // -2^63 and 2^63 are exact doubles; the negated test also catches NaN
      if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        throw ValueError(std::string(what) + ": cannot convert the tensor value " + std::to_string(v) +
                         " to int (NaN, infinite, or outside int64's range)");
      return int64_t(v);
    }
    throw mismatch("int", what);
  }
  /// A float (ints and bools convert; a one-element tensor gives its value).
  double to_double(const char* what = "") const {
    if (is_double()) return d_;
    if (is_int() || is_bool()) return double(i_);
    if (is_tensor() && t_.numel() == 1) return element(t_);
    throw mismatch("float", what);
  }
  /// An int list (a single int becomes a one-element list, as TorchScript's `int[1]` allows).
  std::vector<int64_t> to_ints(const char* what = "") const {
    if (kind() == Kind::IntList) return std::vector<int64_t>(int_span().begin(), int_span().end());
    if (is_int()) return {i_};
    throw mismatch("int[]", what);
  }
  /// An int list as `Dims` (at most 8 entries). **Errors:** ShapeError for more.
  Dims to_dims(const char* what = "") const {
    if (is_int()) return Dims{i_};
    if (kind() != Kind::IntList) throw mismatch("int[]", what);
    const std::span<const int64_t> l = int_span();  // read in place: a copy allocated per view/reshape
    if (l.size() > size_t(max_rank))
      throw ShapeError(std::string(what) + ": a list of " + std::to_string(l.size()) + " sizes exceeds rank 8");
    Dims d;
    for (int64_t x : l) d.push_back(x);
    return d;
  }
  /// An int or float list (or one number) as doubles. **Errors:** ValueError naming `what` for
  /// another kind.
  std::vector<double> to_doubles(const char* what = "") const {
    if (kind() == Kind::DoubleList) return doubles_;
    if (kind() == Kind::IntList) return std::vector<double>(int_span().begin(), int_span().end());
    throw mismatch("float[]", what);
  }

  /// The kind's name as TorchScript prints types: `NoneType`, `int`, `Tensor[]`, ...
  static const char* kind_name(Kind k) {
    static const char* const names[] = {"NoneType", "bool", "int", "float", "str",
                                        "int[]", "float[]", "Tensor", "Tensor[]"};
    return names[int(k)];
  }

 private:
  /// The one element of a one-element cpu tensor, as double (int64 values past 2^53 round).
  /// **Errors:** ValueError for a tensor on a PJRT device (reading it is an observation the
  /// graph does not make implicitly).
  static double element(const AnyTensor& t) {
    if (!t.device().is_cpu())
      throw ValueError("a one-element tensor on " + t.device().str() + " used as a number");
    return t.visit([]<class T>(const Tensor<T>& x) { return static_cast<double>(convert<double>(x.contiguous().data_ptr()[0])); });
  }
  /// The one element of a one-element cpu tensor of an integer or bool dtype, exactly.
  static int64_t int_element(const AnyTensor& t) {
    if (!t.device().is_cpu())
      throw ValueError("a one-element tensor on " + t.device().str() + " used as a number");
    return t.visit([]<class T>(const Tensor<T>& x) -> int64_t {
      if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(x.contiguous().data_ptr()[0]);
      else return 0;  // not reached: floating dtypes go through element()
    });
  }
  /// The values of an IntList.
  std::span<const int64_t> int_span() const noexcept {
    if (ints_inline_) return {short_ints_.begin(), size_t(short_ints_.size())};
    return ints_;
  }
  const Value& need(Kind k, const char* what) const {
    if (kind() != k) throw mismatch(kind_name(k), what);
    return *this;
  }
  TypeError mismatch(const char* want, const char* what) const {
    return TypeError(std::string(what[0] ? what : "value") + ": expected " + want + ", got " +
                     kind_name(kind()));
  }

  Kind kind_ = Kind::None;
  int64_t i_ = 0;  // Int and Bool
  double d_ = 0;
  std::string s_;
  std::vector<int64_t> ints_;
  Dims short_ints_;           // an IntList's values when ints_inline_ (Value::int_list)
  bool ints_inline_ = false;
  std::vector<double> doubles_;
  AnyTensor t_;
  std::vector<AnyTensor> ts_;
};

/// The dtype of the tensor a Python number becomes in arithmetic with a tensor: bool for a
/// bool, int64 for an int, float32 (torch's default dtype) for a float.
inline ScalarType number_dtype(const Value& v) {
  return v.is_double() ? ScalarType::Float : v.is_bool() ? ScalarType::Bool : ScalarType::Int64;
}

/// How an operand takes part in torch's type promotion: a number (a Python scalar, or the
/// wrapped number prim::NumToTensor passed through) < a 0-dim tensor < a tensor with dims.
enum class Operand : int { Number = 0, ZeroDim = 1, Dimensioned = 2 };

/// `v`'s part in type promotion (see Operand).
inline Operand operand_kind(const Value& v) {
  if (!v.is_tensor()) return Operand::Number;
  return v.any().dim() > 0 ? Operand::Dimensioned : Operand::ZeroDim;
}

/// torch's result dtype of a binary arithmetic op on two operands of dtypes `a` and `b` (a
/// number's: number_dtype) and kinds `ka`, `kb` (torch's documented promotion, "Type promotion
/// doc" of torch.result_type): operands of the same kind promote (promote_types); the
/// lower-kind operand (a number below a 0-dim tensor below a dimensioned one) changes the dtype
/// only when it is of a higher category (bool < integer < floating: `int64 tensor * 0.5` is
/// float32, `float16 tensor * 2` stays float16, a bfloat16 activation times a 0-dim float32
/// scale stays bfloat16, an int32 tensor plus a 0-dim float64 tensor is float64).
/// `true_divide`: an integer or bool result becomes float32 (aten::div without a rounding
/// mode). The one rule of the cpu graph (builtin_ops.hpp) and the lowering (lower.hpp).
inline ScalarType binary_result_dtype(ScalarType a, Operand ka, ScalarType b, Operand kb, bool true_divide) {
  auto category = [](ScalarType t) { return t == ScalarType::Bool ? 0 : is_floating(t) ? 2 : 1; };
  ScalarType r;
  if (ka == kb) r = promote_types(a, b);
  else {
    const ScalarType t = ka > kb ? a : b, n = ka > kb ? b : a;
    r = category(n) > category(t) ? n : t;
  }
  if (true_divide && !is_floating(r)) r = ScalarType::Float;
  return r;
}

}  // namespace torchtpu::jit
