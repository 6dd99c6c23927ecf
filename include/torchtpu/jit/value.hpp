// torchtpu/jit/value.hpp — `jit::Value`: one value of a run-time graph (None, bool, int, float,
// string, int list, float list, float32 tensor, tensor list), as TorchScript's IValue has them.
#pragma once
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <utility>  // std::move
#include <vector>   // std::vector

#include "../core/errors.hpp"  // TypeError
#include "../core/tensor.hpp"  // Tensor

namespace torchtpu::jit {

/// The tensor type the run-time graph computes with: float32, any rank, cpu.
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
  /// A list of floats.
  Value(std::vector<double> l) : kind_(Kind::DoubleList), doubles_(std::move(l)) {}  // NOLINT
  /// A tensor.
  Value(FloatTensor t) : kind_(Kind::Tensor), t_(std::move(t)) {}                    // NOLINT
  /// A list of tensors.
  Value(std::vector<FloatTensor> l) : kind_(Kind::TensorList), ts_(std::move(l)) {}  // NOLINT

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

  /// The tensor. **Errors:** TypeError naming `what` for another kind.
  const FloatTensor& tensor(const char* what = "") const { return need(Kind::Tensor, what).t_; }
  /// The bool. **Errors:** TypeError naming `what` for another kind.
  bool to_bool(const char* what = "") const { return need(Kind::Bool, what).i_ != 0; }
  /// The string. **Errors:** TypeError naming `what` for another kind.
  const std::string& str(const char* what = "") const { return need(Kind::String, what).s_; }
  /// The tensors. **Errors:** TypeError naming `what` for another kind.
  const std::vector<FloatTensor>& tensors(const char* what = "") const { return need(Kind::TensorList, what).ts_; }
  /// An int (a bool counts as 0/1; a one-element tensor gives its value truncated toward 0).
  /// **Errors:** TypeError naming `what` for another kind; ValueError naming `what` for a
  /// tensor holding NaN, an infinity or a value outside int64's range [-2^63, 2^63) (the
  /// conversion is undefined in C++; Python's int() raises for NaN and infinities too).
  int64_t to_int(const char* what = "") const {
    if (is_int() || is_bool()) return i_;
    if (is_tensor() && tensor().numel() == 1) {
      const float v = tensor().contiguous().data_ptr()[0];
      // -2^63 and 2^63 are exact floats; the negated test also catches NaN
      if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f))
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
    if (is_tensor() && tensor().numel() == 1) return double(tensor().contiguous().data_ptr()[0]);
    throw mismatch("float", what);
  }
  /// An int list (a single int becomes a one-element list, as TorchScript's `int[1]` allows).
  std::vector<int64_t> to_ints(const char* what = "") const {
    if (kind() == Kind::IntList) return ints_;
    if (is_int()) return {i_};
    throw mismatch("int[]", what);
  }
  /// An int list as `Dims` (at most 8 entries). **Errors:** ShapeError for more.
  Dims to_dims(const char* what = "") const {
    const auto l = to_ints(what);
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
    if (kind() == Kind::IntList) return std::vector<double>(ints_.begin(), ints_.end());
    throw mismatch("float[]", what);
  }

  /// The kind's name as TorchScript prints types: `NoneType`, `int`, `Tensor[]`, ...
  static const char* kind_name(Kind k) {
    static const char* const names[] = {"NoneType", "bool", "int", "float", "str",
                                        "int[]", "float[]", "Tensor", "Tensor[]"};
    return names[int(k)];
  }

 private:
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
  std::vector<double> doubles_;
  FloatTensor t_;
  std::vector<FloatTensor> ts_;
};

}  // namespace torchtpu::jit
