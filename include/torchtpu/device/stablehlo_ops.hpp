// torchtpu/device/stablehlo_ops.hpp — the larger Builder methods (dot_general, reduce,
// reduce_window, convolution); part of stablehlo.hpp, not to be included on its own.
#pragma once
#ifndef TORCHTPU_STABLEHLO_INTERNAL
#error "include <torchtpu/device/stablehlo.hpp> instead of stablehlo_ops.hpp"
#endif
#include <algorithm>  // std::find
#include <mutex>      // std::mutex, std::lock_guard (check messages)
#include <string>     // std::string
#include <vector>     // std::vector

namespace torchtpu::stablehlo {

inline Value Builder::dot_general(const Value& lhs, const Value& rhs, const DotDims& dn,
                                  Precision precision, std::optional<ScalarType> result_type) {
  check(lhs, "dot_general");
  check(rhs, "dot_general");
  if (lhs.dtype != rhs.dtype)
    throw TypeError("dot_general: operand dtypes " + std::string(dtype_name(lhs.dtype)) + " and " +
                    std::string(dtype_name(rhs.dtype)) + " differ");
  if (lhs.dtype == ScalarType::Bool) throw TypeError("dot_general: bool operands are not supported");
  if (dn.lhs_batch.size() != dn.rhs_batch.size() || dn.lhs_contract.size() != dn.rhs_contract.size())
    throw ShapeError("dot_general: lhs and rhs list different numbers of batch/contracting dims");
  auto valid_axes = [](const Value& v, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<bool> seen(v.dims.size(), false);
    for (const auto* l : {&a, &b})
      for (int64_t d : *l) {
        if (d < 0 || d >= v.rank() || seen[static_cast<size_t>(d)]) return false;
        seen[static_cast<size_t>(d)] = true;
      }
    return true;
  };
  if (!valid_axes(lhs, dn.lhs_batch, dn.lhs_contract) || !valid_axes(rhs, dn.rhs_batch, dn.rhs_contract))
    throw ShapeError("dot_general: invalid or repeated axes for shapes " + shape_str(lhs.dims) + " and " +
                     shape_str(rhs.dims));
  std::vector<int64_t> dims;
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    const int64_t a = lhs.dims[static_cast<size_t>(dn.lhs_batch[i])];
    const int64_t b = rhs.dims[static_cast<size_t>(dn.rhs_batch[i])];
    if (a != b)
      throw ShapeError("dot_general: batch sizes " + std::to_string(a) + " and " + std::to_string(b) +
                       " differ (" + shape_str(lhs.dims) + " @ " + shape_str(rhs.dims) + ")");
    dims.push_back(a);
  }
  for (size_t i = 0; i < dn.lhs_contract.size(); ++i) {
    const int64_t a = lhs.dims[static_cast<size_t>(dn.lhs_contract[i])];
    const int64_t b = rhs.dims[static_cast<size_t>(dn.rhs_contract[i])];
    if (a != b)
      throw ShapeError("dot_general: contracted sizes " + std::to_string(a) + " and " + std::to_string(b) +
                       " differ (" + shape_str(lhs.dims) + " @ " + shape_str(rhs.dims) + ")");
  }
  auto free_axes = [&dims](const Value& v, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    for (int64_t d = 0; d < v.rank(); ++d)
      if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end())
        dims.push_back(v.dims[static_cast<size_t>(d)]);
  };
  free_axes(lhs, dn.lhs_batch, dn.lhs_contract);
  free_axes(rhs, dn.rhs_batch, dn.rhs_contract);
  Value r = make(result_type.value_or(lhs.dtype), std::move(dims));
  std::string text = "stablehlo.dot_general " + name(lhs) + ", " + name(rhs) + ", ";
  if (!dn.lhs_batch.empty()) text += "batching_dims = " + list(dn.lhs_batch) + " x " + list(dn.rhs_batch) + ", ";
  text += "contracting_dims = " + list(dn.lhs_contract) + " x " + list(dn.rhs_contract);
  const std::string p(precision_name(precision));
  text += ", precision = [" + p + ", " + p + "] : (" + tensor_type(lhs) + ", " + tensor_type(rhs) +
          ") -> " + tensor_type(r);
  emit(r, text);
  return r;
}

inline Value Builder::reduce(const Value& x, const Value& init, ReduceOp op, std::vector<int64_t> dims) {
  check(x, "reduce");
  check(init, "reduce");
  if (init.rank() != 0 || init.dtype != x.dtype)
    throw TypeError("reduce: init must be a scalar of the operand's dtype");
  if ((op == ReduceOp::And || op == ReduceOp::Or) && is_floating(x.dtype))
    throw TypeError("reduce: and/or need bool or integer operands");
  std::vector<bool> reduced(x.dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= x.rank() || reduced[static_cast<size_t>(dims[i])] || (i && dims[i] < dims[i - 1]))
      throw ShapeError("reduce: bad dimensions " + shape_str(dims) + " for shape " + shape_str(x.dims) +
                       " (must be in range, unique and ascending)");
    reduced[static_cast<size_t>(dims[i])] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < x.dims.size(); ++i)
    if (!reduced[i]) out.push_back(x.dims[i]);
  Value r = make(x.dtype, std::move(out));
  emit(r, "stablehlo.reduce(" + name(x) + " init: " + name(init) + ") applies " + reducer_name(op) +
              " across dimensions = " + list(dims) + " : (" + tensor_type(x) + ", " + tensor_type(init) +
              ") -> " + tensor_type(r));
  return r;
}

inline Value Builder::reduce_window(const Value& x, const Value& init, ReduceOp op, std::vector<int64_t> window,
                                    std::vector<int64_t> strides,
                                    std::vector<std::pair<int64_t, int64_t>> padding) {
  check(x, "reduce_window");
  check(init, "reduce_window");
  if (init.rank() != 0 || init.dtype != x.dtype)
    throw TypeError("reduce_window: init must be a scalar of the operand's dtype");
  const size_t n = x.dims.size();
  if (strides.empty()) strides.assign(n, 1);
  if (padding.empty()) padding.assign(n, {0, 0});
  if (window.size() != n || strides.size() != n || padding.size() != n)
    throw ShapeError("reduce_window: window/stride/padding lists must have rank " + std::to_string(n));
  std::vector<int64_t> out;
  std::string pad_text = "[";
  for (size_t i = 0; i < n; ++i) {
    const int64_t padded = x.dims[i] + padding[i].first + padding[i].second;
    if (window[i] < 1 || strides[i] < 1 || padded < window[i])
      throw ShapeError("reduce_window: window " + shape_str(window) + " does not fit " + shape_str(x.dims));
    out.push_back((padded - window[i]) / strides[i] + 1);
    pad_text += (i ? ", [" : "[") + std::to_string(padding[i].first) + ", " + std::to_string(padding[i].second) + "]";
  }
  pad_text += "]";
  Value r = make(x.dtype, std::move(out));
  const std::string scalar = tensor_type(x.dtype, {});
  const std::string a = "%r" + std::to_string(r.id) + "_a", b = "%r" + std::to_string(r.id) + "_b",
                    c = "%r" + std::to_string(r.id) + "_c";
  std::string text = "\"stablehlo.reduce_window\"(" + name(x) + ", " + name(init) + ") ({\n    ^bb0(" + a +
                     ": " + scalar + ", " + b + ": " + scalar + "):\n      " + c + " = " + reducer_name(op) +
                     " " + a + ", " + b + " : " + scalar + "\n      stablehlo.return " + c + " : " + scalar +
                     "\n    }) {window_dimensions = " + array(window) + ", window_strides = " + array(strides) +
                     ", padding = dense<" + (n ? pad_text : std::string("")) + "> : tensor<" +
                     std::to_string(n) + "x2xi64>} : (" + tensor_type(x) + ", " + scalar + ") -> " +
                     tensor_type(r);
  emit(r, text);
  return r;
}

inline std::vector<Value> Builder::sort(const std::vector<Value>& operands, int64_t dim, bool descending) {
  if (operands.empty()) throw ValueError("sort: no operands");
  for (const Value& v : operands) {
    check(v, "sort");
    if (v.dims != operands[0].dims)
      throw ShapeError("sort: operand shapes " + shape_str(operands[0].dims) + " and " + shape_str(v.dims) + " differ");
  }
  if (dim < 0 || dim >= operands[0].rank())
    throw ShapeError("sort: dimension " + std::to_string(dim) + " out of range for shape " + shape_str(operands[0].dims));
  const int id = next_id_++;  // the sort's own SSA name: %v<id>:N, results %v<id>#k
  const std::string base = "%v" + std::to_string(id);
  std::string in_names, in_types, args;
  for (size_t k = 0; k < operands.size(); ++k) {
    // appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict overlap for
    // `const char* + std::string&&` here
    const std::string sep = k ? ", " : "";
    in_names += sep;
    in_names += name(operands[k]);
    in_types += sep;
    in_types += tensor_type(operands[k]);
    const std::string scalar = tensor_type(operands[k].dtype, {});
    args += sep;
    args += base + "_a" + std::to_string(k) + ": " + scalar + ", " + base + "_b" + std::to_string(k) + ": " + scalar;
  }
  // The comparator: "a before b" on the first operand.
  const ScalarType t = operands[0].dtype;
  const std::string s0 = tensor_type(t, {}), i1 = tensor_type(ScalarType::Bool, {});
  const std::string a = base + "_a0", b = base + "_b0";
  const std::string ctype = is_floating(t) ? "FLOAT" : (t == ScalarType::Bool || t == ScalarType::UInt8) ? "UNSIGNED" : "SIGNED";
  auto cmp = [&](const std::string& r, const char* dir, const std::string& x, const std::string& y) {
    return "      " + r + " = stablehlo.compare " + dir + ", " + x + ", " + y + ", " + ctype + " : (" + s0 + ", " + s0 +
           ") -> " + i1 + "\n";
  };
  std::string body;
  const std::string res = base + "_r";
  if (is_floating(t)) {
    // ascending: !isnan(a) && (isnan(b) || a < b); descending: !isnan(b) && (isnan(a) || a > b)
    const std::string an = base + "_an", bn = base + "_bn", c = base + "_c", o = base + "_o", nt = base + "_nt";
    body += cmp(an, "NE", a, a) + cmp(bn, "NE", b, b) + cmp(c, descending ? "GT" : "LT", a, b);
    body += "      " + o + " = stablehlo.or " + (descending ? an : bn) + ", " + c + " : " + i1 + "\n";
    body += "      " + nt + " = stablehlo.not " + (descending ? bn : an) + " : " + i1 + "\n";
    body += "      " + res + " = stablehlo.and " + nt + ", " + o + " : " + i1 + "\n";
  } else {
    body += cmp(res, descending ? "GT" : "LT", a, b);
  }
  body += "      stablehlo.return " + res + " : " + i1 + "\n";
  std::vector<Value> sorted;
  std::string out_types;
  for (size_t k = 0; k < operands.size(); ++k) {
    sorted.push_back(make(operands[k].dtype, operands[k].dims));
    out_types += (k ? ", " : "") + tensor_type(sorted.back());
  }
  body_ += "    " + base + ":" + std::to_string(operands.size()) + " = \"stablehlo.sort\"(" + in_names + ") ({\n    ^bb0(" + args +
           "):\n" + body + "    }) {dimension = " + std::to_string(dim) + " : i64, is_stable = true} : (" + in_types +
           ") -> (" + out_types + ")\n";
  // each result under a plain name (an identity reshape, folded by XLA)
  for (size_t k = 0; k < operands.size(); ++k)
    body_ += "    " + name(sorted[k]) + " = stablehlo.reshape " + base + "#" + std::to_string(k) + " : (" +
             tensor_type(sorted[k]) + ") -> " + tensor_type(sorted[k]) + "\n";
  return sorted;
}

inline Value Builder::convolution(const Value& lhs, const Value& rhs, const ConvOptions& o) {
  check(lhs, "convolution");
  check(rhs, "convolution");
  if (lhs.dtype != rhs.dtype) throw TypeError("convolution: operand dtypes differ");
  if (lhs.rank() < 3 || rhs.rank() != lhs.rank())
    throw ShapeError("convolution: input " + shape_str(lhs.dims) + " and kernel " + shape_str(rhs.dims) +
                     " need the same rank >= 3");
  const size_t ns = lhs.dims.size() - 2;
  auto spatial_default = [ns](const std::vector<int64_t>& v) {
    if (!v.empty()) return v;
    std::vector<int64_t> d;
    for (size_t i = 0; i < ns; ++i) d.push_back(static_cast<int64_t>(i + 2));
    return d;
  };
  const int64_t ib = o.input_batch_dim < 0 ? 0 : o.input_batch_dim;
  const int64_t ifd = o.input_feature_dim < 0 ? 1 : o.input_feature_dim;
  const int64_t ko = o.kernel_output_feature_dim < 0 ? 0 : o.kernel_output_feature_dim;
  const int64_t ki = o.kernel_input_feature_dim < 0 ? 1 : o.kernel_input_feature_dim;
  const int64_t ob = o.output_batch_dim < 0 ? 0 : o.output_batch_dim;
  const int64_t of = o.output_feature_dim < 0 ? 1 : o.output_feature_dim;
  const auto is = spatial_default(o.input_spatial_dims), ks = spatial_default(o.kernel_spatial_dims),
             os = spatial_default(o.output_spatial_dims);
  if (is.size() != ns || ks.size() != ns || os.size() != ns)
    throw ShapeError("convolution: spatial dimension lists must have " + std::to_string(ns) + " entries");
  auto ones = [ns](const std::vector<int64_t>& v) { return v.empty() ? std::vector<int64_t>(ns, 1) : v; };
  const auto strides = ones(o.window_strides), ldil = ones(o.lhs_dilation), rdil = ones(o.rhs_dilation);
  auto padding = o.padding;
  if (padding.empty()) padding.assign(ns, {0, 0});
  if (strides.size() != ns || ldil.size() != ns || rdil.size() != ns || padding.size() != ns)
    throw ShapeError("convolution: stride/dilation/padding lists must have " + std::to_string(ns) + " entries");
  const int64_t g = o.feature_group_count;
  const int64_t cin = lhs.dims[static_cast<size_t>(ifd)], kin = rhs.dims[static_cast<size_t>(ki)],
                kout = rhs.dims[static_cast<size_t>(ko)];
  if (g < 1 || cin != kin * g || kout % g != 0)
    throw ShapeError("convolution: input " + shape_str(lhs.dims) + " has " + std::to_string(cin) +
                     " features but kernel " + shape_str(rhs.dims) + " expects " + std::to_string(kin) + " x " +
                     std::to_string(g) + " groups");
  std::vector<int64_t> out(lhs.dims.size(), 0);
  out[static_cast<size_t>(ob)] = lhs.dims[static_cast<size_t>(ib)];
  out[static_cast<size_t>(of)] = kout;
  std::string pad_text = "[";
  for (size_t i = 0; i < ns; ++i) {
    const int64_t in = lhs.dims[static_cast<size_t>(is[i])], k = rhs.dims[static_cast<size_t>(ks[i])];
    const int64_t padded = (in > 0 ? (in - 1) * ldil[i] + 1 : 0) + padding[i].first + padding[i].second;
    const int64_t window = (k - 1) * rdil[i] + 1;
    if (strides[i] < 1 || ldil[i] < 1 || rdil[i] < 1 || padded < window)
      throw ShapeError("convolution: kernel " + shape_str(rhs.dims) + " does not fit input " + shape_str(lhs.dims) +
                       " on spatial axis " + std::to_string(i));
    out[static_cast<size_t>(os[i])] = (padded - window) / strides[i] + 1;
    pad_text += (i ? ", [" : "[") + std::to_string(padding[i].first) + ", " + std::to_string(padding[i].second) + "]";
  }
  pad_text += "]";
  auto labels = [ns](int64_t batch, int64_t feat, const std::vector<int64_t>& sp, char b, char f) {
    std::vector<std::string> l(ns + 2);
    l[static_cast<size_t>(batch)] = std::string(1, b);
    l[static_cast<size_t>(feat)] = std::string(1, f);
    for (size_t i = 0; i < ns; ++i) l[static_cast<size_t>(sp[i])] = std::to_string(i);
    std::string s = "[";
    for (size_t i = 0; i < l.size(); ++i) { s += i ? ", " : ""; s += l[i]; }
    return s + "]";
  };
  Value r = make(o.result_type.value_or(lhs.dtype), std::move(out));
  const std::string p(precision_name(o.precision));
  emit(r, "\"stablehlo.convolution\"(" + name(lhs) + ", " + name(rhs) + ") {batch_group_count = 1 : i64, " +
              "dimension_numbers = #stablehlo.conv<" + labels(ib, ifd, is, 'b', 'f') + "x" +
              labels(ko, ki, ks, 'o', 'i') + "->" + labels(ob, of, os, 'b', 'f') + ">, feature_group_count = " +
              std::to_string(g) + " : i64, lhs_dilation = " + array(ldil) + ", padding = dense<" + pad_text +
              "> : tensor<" + std::to_string(ns) + "x2xi64>, precision_config = [#stablehlo<precision " + p +
              ">, #stablehlo<precision " + p + ">], rhs_dilation = " + array(rdil) + ", window_strides = " +
              array(strides) + "} : (" + tensor_type(lhs) + ", " + tensor_type(rhs) + ") -> " + tensor_type(r));
  return r;
}

namespace detail {
/// Messages of run-time checks, by id (1-based; process-wide, never shrinks: one entry per
/// distinct message, of which the library has a handful).
struct CheckMessages {
  std::mutex mu;
  std::vector<std::string> text;
};
inline CheckMessages& check_messages() {
  static auto* m = new CheckMessages();  // leaked: used until exit
  return *m;
}
}  // namespace detail

/// The id of run-time check message `message` (stable within the process; >= 1).
inline int32_t check_message_id(std::string_view message) {
  auto& m = detail::check_messages();
  std::lock_guard<std::mutex> lock(m.mu);
  for (size_t i = 0; i < m.text.size(); ++i)
    if (m.text[i] == message) return static_cast<int32_t>(i + 1);
  m.text.emplace_back(message);
  return static_cast<int32_t>(m.text.size());
}

/// The message of check id `id` (as `check_message_id` gave it), or a generic one.
inline std::string check_message(int32_t id) {
  auto& m = detail::check_messages();
  std::lock_guard<std::mutex> lock(m.mu);
  if (id >= 1 && static_cast<size_t>(id) <= m.text.size()) return m.text[static_cast<size_t>(id - 1)];
  return "a run-time check of the program failed (code " + std::to_string(id) + ")";
}

inline void Builder::runtime_check(const Value& failed, std::string_view message) {
  check(failed, "runtime_check");
  if (failed.dtype != ScalarType::Bool) throw TypeError("runtime_check: the condition must be bool");
  Value any = failed;
  if (failed.rank() != 0) {
    std::vector<int64_t> all(failed.dims.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    any = reduce(failed, constant(0, ScalarType::Bool), ReduceOp::Or, std::move(all));
  }
  const Value code = select(any, constant_int(check_message_id(message), ScalarType::Int32),
                            constant_int(0, ScalarType::Int32));
  check_code_ = check_code_.valid() ? binary("maximum", check_code_, code) : code;
}

}  // namespace torchtpu::stablehlo
