// torchtpu/ops/shape.hpp — operator library, shape and indexing family: cat, stack. Each op is
// one definition (ops/library.hpp) that the typed API (`torchtpu::cat(std::vector<Tensor<T>>)`),
// the run-time API (`torchtpu::cat(std::vector<AnyTensor>)`), the eager PJRT devices and model
// graphs (`aten::cat`) all call. Tests: tests/ops/test_shape.cpp (cpu, every dtype),
// tests/device_ops/test_device_library.cpp (PJRT devices), tests/jit (models).
#pragma once
#include <cstdint>      // int64_t
#include <initializer_list>  // std::initializer_list
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "library.hpp"  // TensorMeta, DtypeSet, ops::call

namespace torchtpu {
namespace ops {

/// Concatenation along `dim` (torch.cat).
///
/// **Shapes:** operands of equal rank ≥ 1 whose sizes agree except along `dim`; the result's
/// `dim` is the sum of theirs. As in torch, a 1-D operand of size 0 (`torch.empty(0)`, the
/// legacy "empty" tensor) is skipped whatever the others' shapes.
/// **Dtypes:** all eight; operands of different dtypes are promoted (torch.result_type).
/// **Errors:** ValueError for an empty list; ShapeError for a 0-dim operand or sizes that do
/// not match (naming every operand); IndexError for `dim` out of range.
/// **Source:** torch.cat (aten/src/ATen/native/TensorShape.cpp's rules, including the legacy
/// empty-tensor skip). **Lowering:** stablehlo.concatenate.
struct CatOp {
  ///@{
  /// Names and schema (torch 1.13 / 2.x `aten::cat`).
  static constexpr std::string_view name = "cat", aten = "aten::cat";
  static constexpr std::string_view schema = "aten::cat(Tensor[] tensors, int dim=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< the dim to concatenate along (negative counts from the end)
  };
  /// Arguments from a model node or a run-time call (schema names).
  static Args args(const ArgReader& r) { return Args{r.to_int("dim")}; }

  /// A legacy empty operand: skipped.
  static bool skipped(const TensorMeta& m) { return m.dim() == 1 && m.sizes[0] == 0; }

  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.empty()) throw ValueError("aten::cat: expected a non-empty list of tensors");
    const TensorMeta* first = nullptr;
    for (const TensorMeta& m : in) {
      if (m.dim() == 0)
        throw ShapeError("aten::cat: zero-dimensional tensor cannot be concatenated (operands " + describe(in) + ")");
      if (!first && !skipped(m)) first = &m;
    }
    TensorMeta out{result_type(in, aten), Dims{0}, Device{}, true};
    if (!first) return out;  // every operand is a legacy empty tensor
    const int d = wrap_dim(a.dim, first->dim(), aten);
    out.sizes = first->sizes;
    int64_t total = 0;
    for (const TensorMeta& m : in) {
      if (skipped(m)) continue;
      bool ok = m.dim() == first->dim();
      for (int i = 0; ok && i < m.dim(); ++i) ok = i == d || m.sizes[i] == first->sizes[i];
      if (!ok)
        throw ShapeError("aten::cat: sizes of tensors must match except in dimension " + std::to_string(d) +
                         " (operands " + describe(in) + ")");
      total += m.sizes[d];
    }
    out.sizes[d] = total;
    return out;
  }

  /// CPU kernel: each operand copied into its slice of `out`.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    if (out.dim() == 1 && out.size(0) == 0) return;
    const int d = wrap_dim(a.dim, out.dim(), aten);
    int64_t off = 0;
    for (const Tensor<T>& t : in) {
      if (t.dim() == 1 && t.size(0) == 0) continue;
      if (t.size(d)) out.narrow(d, off, t.size(d)).copy_(t);
      off += t.size(d);
    }
  }

  /// StableHLO: one concatenate of the operands that are not skipped.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    std::vector<V> keep;
    for (const V& v : in)
      if (!(v.dims.size() == 1 && v.dims[0] == 0)) keep.push_back(v);
    if (keep.empty()) return in[0];
    if (keep.size() == 1) return keep[0];
    return b.concatenate(keep, wrap_dim(a.dim, out.size(), aten));
  }
};

/// Stacking along a new dim `dim` (torch.stack).
///
/// **Shapes:** operands of one shape `S`; the result is `S` with the operand count inserted at
/// `dim` (in `[-rank-1, rank]`).
/// **Dtypes:** all eight, promoted as torch.result_type.
/// **Errors:** ValueError for an empty list; ShapeError for operands of different shapes;
/// IndexError for `dim` out of range.
/// **Source:** torch.stack. **Lowering:** a reshape of each operand, then stablehlo.concatenate.
struct StackOp {
  ///@{
  /// Names and schema.
  static constexpr std::string_view name = "stack", aten = "aten::stack";
  static constexpr std::string_view schema = "aten::stack(Tensor[] tensors, int dim=0) -> Tensor";
  ///@}
  /// The dtypes libtorch allows.
  static constexpr DtypeSet dtypes = DtypeSet::all();
  /// Non-tensor arguments.
  struct Args {
    int64_t dim = 0;  ///< where the new dim goes (negative counts from the end of the result)
  };
  /// Arguments from a model node or a run-time call.
  static Args args(const ArgReader& r) { return Args{r.to_int("dim")}; }

  /// Dtype and shape rule.
  static TensorMeta infer(std::span<const TensorMeta> in, const Args& a) {
    if (in.empty()) throw ValueError("aten::stack: expected a non-empty list of tensors");
    for (const TensorMeta& m : in)
      if (m.sizes != in[0].sizes)
        throw ShapeError("aten::stack: expects each tensor to be equal size (operands " + describe(in) + ")");
    TensorMeta out{result_type(in, aten), in[0].sizes, Device{}, true};
    out.sizes.insert(wrap_dim(a.dim, in[0].dim() + 1, aten), static_cast<int64_t>(in.size()));
    return out;
  }

  /// CPU kernel: each operand copied into its index along `dim`.
  template <element T>
  static void cpu(std::span<const Tensor<T>> in, const Args& a, Tensor<T>& out) {
    const int d = wrap_dim(a.dim, out.dim(), aten);
    if (out.numel() == 0) return;
    for (size_t i = 0; i < in.size(); ++i) out.select(d, static_cast<int64_t>(i)).copy_(in[i]);
  }

  /// StableHLO: each operand reshaped to size 1 along `dim`, then one concatenate.
  template <class B, class V>
  static V lower(B& b, std::span<const V> in, const Args& a, const Dims& out) {
    const int d = wrap_dim(a.dim, out.size(), aten);
    std::vector<V> parts;
    for (const V& v : in) {
      std::vector<int64_t> dims = v.dims;
      dims.insert(dims.begin() + d, 1);
      parts.push_back(b.reshape(v, dims));
    }
    return parts.size() == 1 ? parts[0] : b.concatenate(parts, d);
  }
};

}  // namespace ops

/// Concatenates `tensors` along `dim` (torch.cat); see ops::CatOp for shapes, dtypes and errors.
/// Typed form: every operand has element type `T`; the result is a new `Tensor<T>` on their
/// device. **Example:** `Tensor<float> c = cat({a, b}, 1);`
template <element T>
Tensor<T> cat(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  return ops::call_typed<ops::CatOp, T>(std::span<const Tensor<T>>(tensors), {dim});
}
/// `cat` of a braced list of tensors of one element type.
template <element T, int Rank>
Tensor<T> cat(std::initializer_list<Tensor<T, Rank>> tensors, int64_t dim = 0) {
  return cat(std::vector<Tensor<T>>(tensors.begin(), tensors.end()), dim);
}
/// Run-time typed `cat`: operands of any dtypes (promoted as torch.result_type).
template <std::same_as<AnyTensor> A>
A cat(const std::vector<A>& tensors, int64_t dim = 0) {
  return ops::call<ops::CatOp>(std::span<const AnyTensor>(tensors), {dim});
}

/// Stacks `tensors` (one shape) along a new dim `dim` (torch.stack); see ops::StackOp.
/// **Example:** `Tensor<float> s = stack({a, b}, 0);`
template <element T>
Tensor<T> stack(const std::vector<Tensor<T>>& tensors, int64_t dim = 0) {
  return ops::call_typed<ops::StackOp, T>(std::span<const Tensor<T>>(tensors), {dim});
}
/// `stack` of a braced list of tensors of one element type.
template <element T, int Rank>
Tensor<T> stack(std::initializer_list<Tensor<T, Rank>> tensors, int64_t dim = 0) {
  return stack(std::vector<Tensor<T>>(tensors.begin(), tensors.end()), dim);
}
/// Run-time typed `stack`: operands of any dtypes (promoted).
template <std::same_as<AnyTensor> A>
A stack(const std::vector<A>& tensors, int64_t dim = 0) {
  return ops::call<ops::StackOp>(std::span<const AnyTensor>(tensors), {dim});
}

}  // namespace torchtpu
