// torchtpu/ops/matmul.hpp — matrix products: matmul (torch.matmul rules), bmm, linear.
#pragma once
#include "../core/tensor.hpp"  // Tensor
#include "arith.hpp"           // add
#include "traits.hpp"          // expression

namespace torchtpu {

/// Operands `matmul` accepts: expressions whose promoted element type is not bool.
template <class A, class B>
concept matmul_operands = expression<A> && expression<B> &&
                          matmul_element<promote_t<typename A::value_type, typename B::value_type>>;

/// Matrix product with torch.matmul's rules (1-D, 2-D, batched N-D with broadcast batch dims).
///
/// **Shapes:** `a: [..., m, k]`, `b: [..., k, n]` → `[..., m, n]`; a 1-D `a` is `[1, k]` and a
/// 1-D `b` is `[k, 1]`, the added dim removed from the result; `[k] @ [k]` → `[]`.
/// **Dtypes:** every type but bool (a constraint: bool operands do not compile); promoted. bf16/half operands
/// accumulate in float32.
/// **Errors:** ShapeError `matmul: [2, 3] @ [4, 5]: contracted sizes 3 and 4 differ`; ShapeError
/// when batch dims do not broadcast.
/// **Devices:** cpu (fused epilogue: `relu(matmul(x, w) + b)` runs the epilogue per output
/// tile), tpu via `stablehlo.dot_general`.
template <class A, class B>
  requires matmul_operands<A, B>
auto matmul(const A& a, const B& b) {
  return ContractNode<A, B>(a, b);
}

/// Batched matrix product of two 3-D tensors. **Shapes:** `[b, m, k] @ [b, k, n]` → `[b, m, n]`.
/// **Errors:** ShapeError unless both are 3-D with equal batch sizes.
template <class A, class B>
  requires matmul_operands<A, B>
auto bmm(const A& a, const B& b) {
  static_assert((A::static_rank == dynamic_rank || A::static_rank == 3) &&
                    (B::static_rank == dynamic_rank || B::static_rank == 3),
                "bmm: both arguments must be 3-D");
  const Dims& sa = a.shape();
  const Dims& sb = b.shape();
  if (sa.size() != 3 || sb.size() != 3 || sa[0] != sb[0])
    throw ShapeError("bmm: expected two 3-D tensors with equal batch sizes, got " + to_string(sa) +
                     " and " + to_string(sb));
  return ContractNode<A, B>(a, b);
}

/// `x @ w.T + b` (torch.nn.functional.linear). **Shapes:** `x: [..., in]`, `w: [out, in]`,
/// `b: [out]` → `[..., out]`. **Errors:** ShapeError for mismatched sizes.
template <expression X, matmul_element W, int RW, expression Bias>
  requires matmul_operands<X, Tensor<W, RW>>
auto linear(const X& x, const Tensor<W, RW>& w, const Bias& b) {
  if (w.dim() != 2) throw ShapeError("linear: weight must be 2-D, got " + to_string(w.sizes()));
  return add(matmul(x, w.t()), b);
}
template <expression X, matmul_element W, int RW>
  requires matmul_operands<X, Tensor<W, RW>>
auto linear(const X& x, const Tensor<W, RW>& w) {
  if (w.dim() != 2) throw ShapeError("linear: weight must be 2-D, got " + to_string(w.sizes()));
  return matmul(x, w.t());
}

}  // namespace torchtpu
