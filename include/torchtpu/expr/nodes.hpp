// torchtpu/expr/nodes.hpp — the lazy expression nodes: plain data (operands held by value, an
// op struct, a shape checked at construction). Evaluation lives in fuse/, never here.
#pragma once
#include <cstdint>      // int64_t, uint32_t
#include <string>       // std::string
#include <tuple>        // std::tuple
#include <type_traits>  // std::decay_t
#include <utility>      // std::index_sequence

#include "../core/dtype.hpp"    // promote_types, dtype_of, scalar_type_to
#include "../core/forward.hpp"  // expression
#include "../core/shape.hpp"    // Dims, broadcast_shapes
#include "base.hpp"             // ExprBase

namespace torchtpu {

/// The element type a C++ number becomes inside an expression: bool stays bool, integers
/// become int64, floating point becomes double (narrowed to the tensor's type on use).
template <class S>
using scalar_element_t =
    std::conditional_t<std::same_as<S, bool>, bool,
                       std::conditional_t<std::is_integral_v<S>, int64_t,
                                          std::conditional_t<std::is_floating_point_v<S>, double, S>>>;

/// A plain C++ number in an expression, broadcast to any shape (rank 0). It is a "wrapped
/// number": it promotes a tensor only of a lower category (see core/dtype.hpp).
template <element S>
struct ScalarNode : ExprBase<ScalarNode<S>> {
  /// Element type of the number.
  using value_type = S;
  /// Always rank 0.
  static constexpr int static_rank = 0;
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;
  /// A wrapped number: it does not raise the dtype of tensor operands (PyTorch promotion).
  static constexpr bool weak_scalar = true;
  /// The number.
  S value;
  /// `value` rounded to float once, for the vector kernels (they compute in float and
  /// would otherwise convert it again for every 16 elements).
  float as_float;
  /// A scalar node holding `v`.
  explicit ScalarNode(S v) : value(v), as_float(convert<float>(v)) {}
  /// The empty shape (rank 0).
  const Dims& shape() const noexcept { return shape_; }

 private:
  Dims shape_{};
};

template <class E>
inline constexpr bool is_weak_scalar = requires { requires E::weak_scalar; };

/// The promoted dtype of a list of operands: tensors/expressions promote with
/// `promote_types`; wrapped numbers only lift the category (PyTorch's result_type).
template <class... Args>
constexpr ScalarType promote_operands() {
  bool strong = false;
  ScalarType s = ScalarType::Bool;
  auto add_strong = [&](ScalarType t) { s = strong ? promote_types(s, t) : t; strong = true; };
  ((is_weak_scalar<Args> ? void() : add_strong(dtype_of<typename Args::value_type>())), ...);
  if (!strong) {  // only numbers: promote them among themselves
    bool first = true;
    ((s = first ? dtype_of<typename Args::value_type>()
                : promote_types(s, dtype_of<typename Args::value_type>()),
      first = false), ...);
    return s;
  }
  auto add_weak = [&](ScalarType t) {
    if (dtype_category(t) > dtype_category(s))
      s = dtype_category(t) == 2 ? ScalarType::Float : ScalarType::Int64;
  };
  ((is_weak_scalar<Args> ? add_weak(dtype_of<typename Args::value_type>()) : void()), ...);
  return s;
}

/// Static rank of a broadcast over operands: the largest, when all are known.
template <class... Args>
constexpr int broadcast_static_rank() {
  int r = 0;
  bool dyn = false;
  ((Args::static_rank == dynamic_rank ? void(dyn = true)
                                      : void(r = Args::static_rank > r ? Args::static_rank : r)), ...);
  return dyn ? dynamic_rank : r;
}

/// Default hooks an op struct may override: which operands take part in promotion
/// (`promote_first`), the compute type for a promoted type, and the result type.
template <class Op, class C>
using op_compute_t = typename Op::template compute<C>;
template <class Op, class C>
using op_result_t = typename Op::template result<C>;

template <class Op>
constexpr int op_promote_first() {
  if constexpr (requires { Op::promote_first; }) return Op::promote_first;
  else return 0;
}

template <int First, class... Args>
struct promote_tail;
/// Promotion of the operands, all of them (no operand is read as bool).
template <class... Args>
struct promote_tail<0, Args...> {
  /// The promoted ScalarType.
  static constexpr ScalarType value = promote_operands<Args...>();
};
/// Promotion of the operands after the first (the first is a `where` condition, read as bool).
template <class A0, class... Args>
struct promote_tail<1, A0, Args...> {
  /// The promoted ScalarType.
  static constexpr ScalarType value = promote_operands<Args...>();
};

/// An elementwise n-ary map (`a + b`, `exp(x)`, `where(c, a, b)`, casts) with NumPy
/// broadcasting. `compute_type` is what operands are converted to (arithmetic happens in its
/// opmath type); `value_type` is the element type produced.
/// Calls `f(x)` for each element `x` of tuple `t`, in order: std::apply's job for a fold,
/// without its invoke machinery (cheaper to compile; every expression walk uses it).
template <class Tuple, class F>
constexpr void for_each_in(Tuple& t, F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) { (f(std::get<I>(t)), ...); }(
      std::make_index_sequence<std::tuple_size_v<std::remove_const_t<Tuple>>>{});
}

/// `a == b` as a plain loop (Dims' operator== is a memcmp call).
inline bool same_shape(const Dims& a, const Dims& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// **Errors:** ShapeError from the constructor when operand shapes do not broadcast.
template <class Op, expression... Args>
struct MapNode : ExprBase<MapNode<Op, Args...>> {
  /// Promoted type of the operands (PyTorch rules; wrapped numbers are weak).
  using promoted_type =
      typename scalar_type_to<promote_tail<op_promote_first<Op>(), Args...>::value>::type;
  /// Type the op computes in.
  using compute_type = op_compute_t<Op, promoted_type>;
  /// Element type of the result.
  using value_type = op_result_t<Op, compute_type>;
  /// Broadcast static rank of the operands (`dynamic_rank` if any is dynamic).
  static constexpr int static_rank = broadcast_static_rank<Args...>();
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;

  /// The operands (held by value).
  std::tuple<Args...> args;
  /// The op (its parameters, e.g. clamp bounds).
  Op op;

  // Operands are forwarded straight into `args` (one move or copy per operand, not two).
  /// A map of `o` over operands `a...`. **Errors:** ShapeError naming every shape when they do not
  /// broadcast.
  template <class... X>
    requires(sizeof...(X) == sizeof...(Args))
  explicit MapNode(Op o, X&&... a) : args(std::forward<X>(a)...), op(o) {
    bool first = true;
    auto fold = [&](const Dims& s) {
      if (first) shape_ = s;
      else if (!same_shape(shape_, s)) shape_ = broadcast_shapes(shape_, s, Op::name);
      first = false;
    };
    for_each_in(args, [&](const auto& x) { fold(x.shape()); });
  }
  // Move and destruction out of line: an expression holds its operands by value, so each
  // level of `f(g(h(x)))` moves the subtree below it; inlined, that code grows with depth
  // times size (compile time: docs/compile-time.md).
  /// Copies the operands (tensor handles share storage).
  MapNode(const MapNode&) = default;
  /// Moves the operands.
  [[gnu::noinline]] MapNode(MapNode&& o) noexcept : args(std::move(o.args)), op(o.op), shape_(o.shape_) {}
  /// Copy-assigns the operands.
  MapNode& operator=(const MapNode&) = default;
  /// Move-assigns the operands.
  MapNode& operator=(MapNode&&) = default;
  [[gnu::noinline]] ~MapNode() {}
  /// The broadcast shape.
  const Dims& shape() const noexcept { return shape_; }

 private:
  Dims shape_;
};

/// Bit mask of reduced dims over an input of rank `rank` (empty `dims` = all dims).
inline uint32_t reduce_mask(const Dims& dims, int rank, std::string_view op) {
  if (dims.empty()) return rank == 0 ? 0u : (rank >= 32 ? ~0u : ((1u << rank) - 1u));
  uint32_t m = 0;
  for (int64_t d : dims) {
    const int w = wrap_dim(d, rank, op);
    if (m & (1u << w)) throw ShapeError(std::string(op) + ": dim " + std::to_string(w) + " appears multiple times in " + to_string(dims));
    m |= 1u << w;
  }
  if (rank == 0) m = 0;
  return m;
}

/// Output shape of a reduction.
inline Dims reduced_shape(const Dims& in, uint32_t mask, bool keepdim) {
  Dims out;
  for (int i = 0; i < in.size(); ++i) {
    if (mask & (1u << i)) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

/// A reduction (`sum`, `mean`, `max`, ...) of its operand over the dims in `mask`.
/// The operand is consumed without being materialized (fuse/ streams it).
template <class Op, expression E>
struct ReduceNode : ExprBase<ReduceNode<Op, E>> {
  /// Element type of the operand.
  using input_type = typename E::value_type;
  /// Element type of the result.
  using value_type = typename Op::template result<input_type>;
  /// Reductions have a run-time rank.
  static constexpr int static_rank = dynamic_rank;
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;

  /// The reduced operand (held by value).
  E arg;
  /// Reduced dims, one bit per dim.
  uint32_t mask;
  /// Keep reduced dims as size 1.
  bool keepdim;

  /// A reduction of `a` over `dims` (`{}` = all). **Errors:** IndexError for a bad dim; ShapeError
  /// when Op needs a non-empty dim.
  ReduceNode(E a, const Dims& dims, bool keep)
      : arg(std::move(a)), mask(reduce_mask(dims, arg.shape().size(), Op::name)), keepdim(keep),
        shape_(reduced_shape(arg.shape(), mask, keep)) {
    if constexpr (requires { Op::needs_nonempty; }) {
      for (int i = 0; i < arg.shape().size(); ++i)
        if ((mask & (1u << i)) && arg.shape()[i] == 0)
          throw ShapeError(std::string(Op::name) + ": cannot reduce over a zero-size dimension " +
                           std::to_string(i) + " of shape " + to_string(arg.shape()) +
                           " (the operation has no identity)");
    }
  }
  /// The result shape.
  const Dims& shape() const noexcept { return shape_; }

 private:
  Dims shape_;
};

/// `argmax` / `argmin` along one dim (or over the flattened input when `dim` is absent).
template <class Op, expression E>
struct ArgReduceNode : ExprBase<ArgReduceNode<Op, E>> {
  /// Element type of the operand.
  using input_type = typename E::value_type;
  /// Indices are int64.
  using value_type = int64_t;
  /// Run-time rank.
  static constexpr int static_rank = dynamic_rank;
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;

  /// The operand (held by value).
  E arg;
  int dim;  ///< -1: over all elements (flattened)
  /// Keep the reduced dim as size 1.
  bool keepdim;

  /// argmax/argmin of `a` along `d` (-1 with the flattened form). **Errors:** IndexError;
  /// ShapeError for an empty dim.
  ArgReduceNode(E a, int d, bool keep) : arg(std::move(a)), dim(d), keepdim(keep) {
    const Dims& in = arg.shape();
    if (dim < 0) {
      if (numel(in) == 0) throw ShapeError(std::string(Op::name) + ": expected a non-empty tensor, got shape " + to_string(in));
      if (keep) shape_ = Dims::filled(in.size(), 1);
    } else {
      if (in.size() > 0 && in[dim] == 0)
        throw ShapeError(std::string(Op::name) + ": cannot reduce over zero-size dim " + std::to_string(dim) + " of shape " + to_string(in));
      shape_ = reduced_shape(in, in.size() ? (1u << dim) : 0u, keep);
    }
  }
  /// The result shape.
  const Dims& shape() const noexcept { return shape_; }

 private:
  Dims shape_;
};

/// Numerically stable softmax / log_softmax along `dim` (max subtracted; two passes per row).
template <expression E, bool Log>
struct SoftmaxNode : ExprBase<SoftmaxNode<E, Log>> {
  /// Element type of the operand.
  using input_type = typename E::value_type;
  /// Element type of the result (float32 for integers).
  using value_type = std::conditional_t<floating_element<input_type>, input_type, float>;
  /// Same rank as the operand.
  static constexpr int static_rank = E::static_rank;
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;
  /// Op name (`softmax` or `log_softmax`).
  static constexpr std::string_view name = Log ? "log_softmax" : "softmax";

  /// The operand (held by value).
  E arg;
  /// The dim normalized over.
  int dim;
  /// Softmax of `a` along `d` (negative counts from the end). **Errors:** IndexError.
  SoftmaxNode(E a, int64_t d) : arg(std::move(a)), dim(wrap_dim(d, arg.shape().size(), name)) {}
  /// Same shape as the operand.
  const Dims& shape() const noexcept { return arg.shape(); }
};

/// Matrix product with torch.matmul's rules: 1-D operands are promoted to a row (lhs) or
/// column (rhs) and the added dim removed; leading (batch) dims broadcast.
/// **Shapes:** `a: [..., m, k]`, `b: [..., k, n]` → `[..., m, n]`.
/// **Errors:** ShapeError `matmul: [2, 3] @ [4, 5]: contracted sizes 3 and 4 differ`.
template <expression A, expression B>
struct ContractNode : ExprBase<ContractNode<A, B>> {
  /// Promoted element type of the operands.
  using value_type = promote_t<typename A::value_type, typename B::value_type>;
  static_assert(matmul_element<value_type>, "matmul: bool tensors are not supported");
  /// Static rank of the result (`dynamic_rank` if an operand is dynamic).
  static constexpr int static_rank = [] {
    constexpr int ra = A::static_rank, rb = B::static_rank;
    if (ra == dynamic_rank || rb == dynamic_rank) return dynamic_rank;
    if (ra == 1 && rb == 1) return 0;
    if (ra == 1) return rb - 1;
    if (rb == 1) return ra - 1;
    return ra > rb ? ra : rb;
  }();
  static_assert(A::static_rank != 0 && B::static_rank != 0,
                "matmul: both arguments need at least 1 dimension (got a rank-0 operand)");
  /// Marks the node as an expression.
  static constexpr bool is_torchtpu_expression = true;

  /// Left operand (held by value).
  A a;
  /// Right operand (held by value).
  B b;
  Dims batch;   ///< broadcast batch shape
  ///@{
  /// Matrix sizes `[m, k] @ [k, n]`.
  int64_t m = 1, k = 1, n = 1;
  ///@}

  /// Matrix product of `x` and `y` (torch.matmul rules). **Errors:** ShapeError if the `k` sizes
  /// differ or the batch dims do not broadcast.
  ContractNode(const A& x, const B& y) : a(x), b(y) {
    const Dims& sa = a.shape();
    const Dims& sb = b.shape();
    if (sa.size() == 0 || sb.size() == 0)
      throw ShapeError("matmul: both arguments need at least 1 dimension, got " + to_string(sa) + " @ " + to_string(sb));
    const bool va = sa.size() == 1, vb = sb.size() == 1;
    m = va ? 1 : sa[sa.size() - 2];
    const int64_t ka = sa.back();
    const int64_t kb = vb ? sb[0] : sb[sb.size() - 2];
    n = vb ? 1 : sb.back();
    if (ka != kb)
      throw ShapeError("matmul: " + to_string(sa) + " @ " + to_string(sb) + ": contracted sizes " +
                       std::to_string(ka) + " and " + std::to_string(kb) + " differ");
    k = ka;
    if (sa.size() > 2 || sb.size() > 2) {  // batched (2-D and 1-D operands have no batch dims)
      Dims ba(sa.begin(), sa.end() - (va ? 1 : 2));
      Dims bb(sb.begin(), sb.end() - (vb ? 1 : 2));
      try {
        batch = broadcast_shapes(ba, bb, "batch dims");
      } catch (const ShapeError& e) {  // name the operands, not only their batch dims
        throw ShapeError("matmul: " + to_string(sa) + " @ " + to_string(sb) + ": " + e.what());
      }
      shape_ = batch;
    }
    if (!va) shape_.push_back(m);
    if (!vb) shape_.push_back(n);
  }
  /// The result shape.
  const Dims& shape() const noexcept { return shape_; }

 private:
  Dims shape_;
};

}  // namespace torchtpu
