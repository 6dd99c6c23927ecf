// torchtpu/core/format.hpp — printing tensors and expressions like PyTorch does: an
// `fmt::formatter` for both (expressions are evaluated first).
#pragma once
#include <algorithm>  // std::max
#include <cmath>    // std::isfinite, std::fabs, std::floor
#include <string>   // std::string
#include <vector>   // std::vector

#include <fmt/core.h>  // fmt::formatter, fmt::format, fmt::format_to (lighter than fmt/format.h)

#include "../ops/methods.hpp"  // ExprBase::eval
#include "tensor.hpp"          // Tensor

namespace torchtpu::detail {

/// Elements shown per dim at each end when a tensor is summarised (torch: edgeitems=3).
inline constexpr int64_t print_edge_items = 3;
/// Tensors with more elements than this are summarised with "..." (torch: threshold=1000).
inline constexpr int64_t print_threshold = 1000;

/// Text of one element: `style` 0 = integer-valued floats ("1."), 1 = fixed 4 decimals,
/// 2 = scientific, 3 = integer, 4 = bool.
/// (`fmt::runtime`: the format strings are fixed, so fmt's compile-time check of them would
/// only cost every translation unit that includes this header.)
inline std::string format_element(double v, int style) {
  if (style == 4) return v != 0 ? "True" : "False";
  if (style == 3) return fmt::format(fmt::runtime("{}"), static_cast<long long>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (style == 0) return fmt::format(fmt::runtime("{:.0f}."), v);
  if (style == 1) return fmt::format(fmt::runtime("{:.4f}"), v);
  return fmt::format(fmt::runtime("{:.4e}"), v);
}

/// Characters per printed line before the innermost dim wraps (torch: linewidth=80).
inline constexpr int64_t print_linewidth = 80;

/// Non-template body of the printer: values in row-major order (already gathered), shape,
/// dtype name. Follows torch/_tensor_str.py: integer-valued floats print as "1.", others with
/// 4 decimals; scientific notation when max/min of the nonzero finite magnitudes exceeds 1000,
/// the max exceeds 1e8, or (non-integer values) the min is below 1e-4; innermost rows wrap
/// at 80 columns; `size=(..)` for empty tensors of rank != 1; `dtype=` unless the dtype is
/// float32, int64 or bool (always for an empty tensor that is not float32).
inline std::string format_tensor_values(const std::vector<double>& vals, const Dims& shape,
                                        ScalarType dtype) {
  const bool summarise = numel(shape) > print_threshold;
  int style = dtype == ScalarType::Bool ? 4 : is_floating(dtype) ? 0 : 3;
  if (style == 0) {
    double mx = 0, mn = INFINITY;
    bool any = false;
    for (double v : vals) {
      if (!std::isfinite(v)) continue;
      if (v != std::floor(v)) style = 1;
      const double a = std::fabs(v);
      if (a == 0) continue;
      any = true;
      mx = a > mx ? a : mx;
      mn = a < mn ? a : mn;
    }
    if (any && (mx / mn > 1000.0 || mx > 1e8 || (style == 1 && mn < 1e-4))) style = 2;
  }
  size_t width = 0;
  std::vector<std::string> txt(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    txt[i] = format_element(vals[i], style);
    width = txt[i].size() > width ? txt[i].size() : width;
  }
  std::string out = "tensor(";
  const int rank = shape.size();
  size_t pos = 0;
  // recursive print over dims; `vals` holds only the shown elements (summary-aware order)
  auto rec = [&](auto& self, int d, int indent) -> void {
    const int64_t n = shape[d];
    const bool cut = summarise && n > 2 * print_edge_items;
    out += '[';
    if (d + 1 == rank) {  // innermost dim: elements, wrapped at the line width
      std::vector<std::string> items;
      for (int64_t i = 0; i < n; ++i) {
        if (cut && i == print_edge_items) {
          items.emplace_back(" ...");
          i = n - print_edge_items;
        }
        items.push_back(std::string(width - txt[pos].size(), ' ') + txt[pos]);
        ++pos;
      }
      const int64_t per_line = std::max<int64_t>(1, (print_linewidth - indent) / int64_t(width + 2));
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += int64_t(i) % per_line ? ", " : ",\n" + std::string(size_t(indent + 1), ' ');
        out += items[i];
      }
    } else {
      const std::string sep = "," + std::string(size_t(rank - d - 1), '\n') + std::string(size_t(indent + 1), ' ');
      for (int64_t i = 0; i < n; ++i) {
        if (cut && i == print_edge_items) {
          out += "..." + sep;
          i = n - print_edge_items;
        }
        self(self, d + 1, indent + 1);
        if (i + 1 < n) out += sep;
      }
    }
    out += ']';
  };
  if (numel(shape) == 0) {
    out += "[]";
    if (rank != 1) {
      out += ", size=(";
      for (int i = 0; i < rank; ++i) { out += i ? ", " : ""; out += std::to_string(shape[i]); }
      out += rank == 1 ? ",)" : ")";
    }
    if (dtype != ScalarType::Float) out += std::string(", dtype=torch.") + std::string(dtype_name(dtype));
    return out + ")";
  }
  if (rank == 0) out += txt[0];
  else rec(rec, 0, 7);
  if (dtype != ScalarType::Float && dtype != ScalarType::Int64 && dtype != ScalarType::Bool)
    out += std::string(", dtype=torch.") + std::string(dtype_name(dtype));
  return out + ")";
}

/// Gather the elements to print (all, or the summary's edges) as double.
template <element T, int R>
std::vector<double> gather_for_print(const Tensor<T, R>& t) {
  std::vector<double> vals;
  const bool summarise = t.numel() > print_threshold;
  const int rank = t.dim();
  int64_t idx[max_rank] = {};
  auto rec = [&](auto& self, int d) -> void {
    if (d == rank) {
      int64_t off = 0;
      for (int i = 0; i < rank; ++i) off += idx[i] * t.strides()[i];
      vals.push_back(double(opmath_t<T>(t.data_ptr()[off])));
      return;
    }
    const int64_t n = t.sizes()[d];
    const bool cut = summarise && n > 2 * print_edge_items;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == print_edge_items) i = n - print_edge_items;
      idx[d] = i;
      self(self, d + 1);
    }
  };
  if (t.numel() > 0) rec(rec, 0);
  return vals;
}

}  // namespace torchtpu::detail

// Doxygen cannot place a specialization in fmt, which it does not read: hidden from the API
// reference, which describes printing under core/format.hpp (docs/api.md).
/// @cond
/// `fmt::format("{}", t)` prints like PyTorch: `tensor([[1., 2.], [3., 4.]])` (with line breaks),
/// the dtype when it is not float32/int64/bool, and "..." summaries above 1000 elements.
template <class E>
  requires torchtpu::expression<E>
struct fmt::formatter<E> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class Ctx>
  auto format(const E& e, Ctx& ctx) const {
    using V = typename E::value_type;
    torchtpu::Tensor<V> t;
    if constexpr (torchtpu::tensor_handle<E>) t = e;
    else t = e.eval();
    if (!t.defined()) return fmt::format_to(ctx.out(), "tensor(undefined)");
    if (!t.device().is_cpu()) t = t.cpu();
    return fmt::format_to(ctx.out(), "{}",
                          torchtpu::detail::format_tensor_values(torchtpu::detail::gather_for_print(t),
                                                                 t.sizes(), t.dtype()));
  }
};
/// @endcond
