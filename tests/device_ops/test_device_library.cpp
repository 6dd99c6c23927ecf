// tests/device_ops/test_device_library.cpp — ops of the operator library (ops/library.hpp: cat,
// stack, roll, tril, triu, repeat, tile, flip, diag, and ops/indexing.hpp's) on the PJRT device under test, in each execution mode, against the same calls on the
// cpu: typed operands of every dtype, mixed dtypes through AnyTensor (promoted on the device),
// strided views as operands, a library op between elementwise statements (fused mode keeps it
// in the deferred graph), and errors (mixed devices). Values are small integers or exact
// binary fractions, so the comparison has no tolerance.
#include <cmath>   // std::signbit, std::isnan
#include <string>  // std::string
#include <vector>  // std::vector
#include <limits>  // std::numeric_limits

#include "helpers.hpp"  // check_close, host_values, test_device, test_input

using namespace torchtpu;

namespace {

/// A [rows, cols] tensor of T holding 0, 1, 2, ... (mod 2 for bool) plus `start`.
template <class T>
Tensor<T> counting(int64_t rows, int64_t cols, int start) {
  Tensor<double> d = Tensor<double>::empty(Dims{rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) d.data_ptr()[i] = static_cast<double>(start + i);
  return Tensor<T>(d.template to<T>());
}

template <class T>
void check_dtype() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<T> a = counting<T>(2, 3, 0), b = counting<T>(1, 3, 6), c = counting<T>(2, 1, 9);
  const auto da = a.to(test_device()), db = b.to(test_device()), dc = c.to(test_device());
  check_close(cat({da, db}, 0), cat({a, b}, 0), 0.0);
  check_close(cat({da, dc}, -1), cat({a, c}, -1), 0.0);
  check_close(stack({da, da}, 1), stack({a, a}, 1), 0.0);
}


/// roll, tril, triu, repeat, tile, flip, diag on the device against the same calls on the cpu.
template <class T>
void check_shape_ops() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const Tensor<T> a = counting<T>(3, 4, 1), v = counting<T>(1, 3, 2).select(0, 0);
  const auto da = a.to(test_device()), dv = v.to(test_device());
  check_close(roll(da, 5), roll(a, 5), 0.0);
  check_close(roll(da, {1, -1}, {0, 1}), roll(a, {1, -1}, {0, 1}), 0.0);
  check_close(roll(da.t(), 2, 0), roll(a.t(), 2, 0), 0.0);  // a transposed view
  for (int64_t k : {-4, -1, 0, 2, 9}) {
    check_close(tril(da, k), tril(a, k), 0.0);
    check_close(triu(da, k), triu(a, k), 0.0);
  }
  check_close(repeat(da, {2, 1, 3}), repeat(a, {2, 1, 3}), 0.0);
  check_close(repeat(dv, {0, 2}), repeat(v, {0, 2}), 0.0);
  check_close(tile(dv, {2, 2}), tile(v, {2, 2}), 0.0);
  check_close(flip(da, {0, -1}), flip(a, {0, -1}), 0.0);
  check_close(flip(da.slice(1, 0, 4, 2), {1}), flip(a.slice(1, 0, 4, 2), {1}), 0.0);
  for (int64_t k : {-2, 0, 1, 5}) {
    check_close(diag(dv, k), diag(v, k), 0.0);
    check_close(diag(da, k), diag(a, k), 0.0);
  }
  check_close(diag(da.t(), 1), diag(a.t(), 1), 0.0);
}


/// pad (every mode the dtype allows) and constant_pad_nd on the device against the same calls
/// on the cpu: negative pads, a transposed view, a size-0 dim, 1 to 3 padded dims.
template <class T>
void check_pad_ops() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> a = counting<T>(3, 4, 1), b = counting<T>(6, 4, 2).reshape(Dims{1, 2, 3, 4});
  const auto da = a.to(dev), db = b.to(dev);
  check_close(pad(da, {1, 2, 0, 1}, "constant", 3.0), pad(a, {1, 2, 0, 1}, "constant", 3.0), 0.0);
  check_close(pad(da, {1, -2, -1, 1}), pad(a, {1, -2, -1, 1}), 0.0);
  check_close(pad(da.t(), {2, 0}, "constant", 1.0), pad(a.t(), {2, 0}, "constant", 1.0), 0.0);
  check_close(constant_pad_nd(db, {0, 1, 1, 0, 1, 1}, 2.0), constant_pad_nd(b, {0, 1, 1, 0, 1, 1}, 2.0), 0.0);
  check_close(pad(Tensor<T>::empty(Dims{0, 2}).to(dev), {1, 1, 1, 0}), pad(Tensor<T>::empty(Dims{0, 2}), {1, 1, 1, 0}), 0.0);
  const std::vector<std::vector<int64_t>> pads = {{1, 2}, {-1, 3}, {2, 1, 1, -1}, {1, 0, 0, 1, 1, 1}, {3, 3, 2, 2}};
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    if (!is_floating(dtype_of<T>()) && std::string(mode) != "circular") continue;
    INFO("mode " << mode);
    for (const auto& p : pads) {  // on a batched operand of rank len(p) / 2 + 2
      const Dims shape = p.size() == 2 ? Dims{2, 3, 4} : p.size() == 4 ? Dims{1, 2, 3, 4} : Dims{1, 1, 2, 3, 4};
      check_close(pad(db.reshape(shape), p, mode), pad(b.reshape(shape), p, mode), 0.0);
    }
    for (const auto& p : {pads[0], pads[2]})  // a transposed view [1, 4, 3]
      check_close(pad(da.t().reshape(Dims{1, 4, 3}), p, mode), pad(a.t().reshape(Dims{1, 4, 3}), p, mode), 0.0);
  }
}

/// An int64 index tensor of `shape` from `vals`.
Tensor<int64_t> index_of(const std::vector<int64_t>& vals, const Dims& shape) {
  Tensor<int64_t> t = Tensor<int64_t>::empty(shape);
  for (size_t i = 0; i < vals.size(); ++i) t.data_ptr()[i] = vals[i];
  return t;
}

/// index_select, gather, take_along_dim, scatter, scatter_add, scatter_reduce, masked_fill,
/// one_hot on the device against the same calls on the cpu (indices in range: devices do not check them).
template <class T>
void check_index_ops() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> a = counting<T>(3, 4, 1);
  const auto da = a.to(dev);
  const Tensor<int64_t> i1 = index_of({2, 0, 2}, Dims{3}), g = index_of({3, 0, 1, 1, 2, 2}, Dims{3, 2});
  const Tensor<int32_t> i32 = Tensor<int32_t>(i1.template to<int32_t>());
  check_close(index_select(da, 0, i1.to(dev)), index_select(a, 0, i1), 0.0);
  check_close(index_select(da.t(), -1, i32.to(dev)), index_select(a.t(), -1, i32), 0.0);
  check_close(gather(da, 1, g.to(dev)), gather(a, 1, g), 0.0);
  const Tensor<int64_t> g0 = index_of({2, 1, 0, 0, 0, 2, 1, 1}, Dims{4, 2}).t();  // non-contiguous [2, 4]
  check_close(gather(da, 0, g0.to(dev)), gather(a, 0, g0), 0.0);
  check_close(take_along_dim(da, index_of({11, 0, 5}, Dims{3}).to(dev)), take_along_dim(a, index_of({11, 0, 5}, Dims{3})), 0.0);
  const Tensor<int64_t> tb = index_of({0, 2}, Dims{1, 2});
  check_close(take_along_dim(da, tb.to(dev), 1), take_along_dim(a, tb, 1), 0.0);
  const Tensor<int64_t> si = index_of({3, 0, 2, 1}, Dims{2, 2});
  const Tensor<T> src = counting<T>(2, 3, 20);
  check_close(scatter(da, 1, si.to(dev), src.to(dev)), scatter(a, 1, si, src), 0.0);
  const Tensor<int64_t> s0 = index_of({2, 0, 1, 2}, Dims{2, 2}).t();
  check_close(scatter(da, 0, s0.to(dev), 7), scatter(a, 0, s0, 7), 0.0);
  const Tensor<int64_t> sa = index_of({0, 0, 1, 3, 3, 3, 2, 1, 0}, Dims{3, 3});
  const Tensor<T> ones = full<T>(Dims{3, 3}, convert<T>(1));
  check_close(scatter_add(da, 1, sa.to(dev), ones.to(dev)), scatter_add(a, 1, sa, ones), 0.0);
  if constexpr (!std::is_same_v<T, bool>) {  // scatter_reduce: every reduction, with and without self
    const Tensor<T> vals = counting<T>(3, 3, 2);
    for (const char* r : {"sum", "prod", "mean", "amax", "amin"})
      for (const bool self : {true, false}) {
        INFO("scatter_reduce " << r << " include_self=" << self);
        // products of counting values overflow small integer types: both sides wrap alike
        check_close(scatter_reduce(da, 1, sa.to(dev), vals.to(dev), r, self), scatter_reduce(a, 1, sa, vals, r, self),
                    std::is_floating_point_v<T> ? 1e-6 : is_floating(dtype_of<T>()) ? 1e-2 : 0.0);
      }
  }
  const Tensor<T> rows = counting<T>(3, 4, 5);
  check_close(index_add(da, 0, i1.to(dev), rows.to(dev)), index_add(a, 0, i1, rows), 0.0);
  const Tensor<bool> m = Tensor<bool>(counting<int64_t>(3, 1, 0) != int64_t{1});  // true, false, true
  check_close(masked_fill(da, m.to(dev), 5), masked_fill(a, m, 5), 0.0);
  check_close(masked_fill(da.t(), m.t().to(dev), -1.5), masked_fill(a.t(), m.t(), -1.5), 0.0);
}

}  // namespace

TEST_CASE("library ops on the device: every dtype, every mode", "[pjrt][library]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_dtype<bool>();
    check_dtype<uint8_t>();
    check_dtype<int32_t>();
    check_dtype<int64_t>();
    check_dtype<half>();
    check_dtype<bfloat16>();
    check_dtype<float>();
    check_dtype<double>();
  }
}

TEST_CASE("shape ops on the device (roll, tril, triu, repeat, tile, flip, diag), every mode", "[pjrt][library]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_shape_ops<float>();
    check_shape_ops<int64_t>();
  }
  check_shape_ops<bool>();  // the other dtypes in the default mode
  check_shape_ops<uint8_t>();
  check_shape_ops<int32_t>();
  check_shape_ops<half>();
  check_shape_ops<bfloat16>();
  check_shape_ops<double>();
}

TEST_CASE("library ops on the device: views, promotion, fusion with elementwise statements", "[pjrt][library]") {
  const Tensor<float> x = test_input({4, 6}, 71), y = test_input({6, 4}, 72);
  auto dx = x.to(test_device()), dy = y.to(test_device());
  // strided and transposed views as operands; the legacy empty tensor is skipped
  check_close(cat({dx.slice(1, 0, 6, 2), dy.t().slice(1, 1, 6, 2)}, 0),
              cat({x.slice(1, 0, 6, 2), y.t().slice(1, 1, 6, 2)}, 0), 0.0);
  const Tensor<float> e = Tensor<float>::empty(Dims{0});
  check_close(cat({e.to(test_device()), dx}, 1), x, 0.0);
  // between elementwise statements: y = cat(x * 2, x + 1) * 3 in three statements
  Tensor<float> p = dx * 2.0f;
  Tensor<float> q = cat({p, Tensor<float>(dx + 1.0f)}, 0);
  Tensor<float> r = q * 3.0f;
  check_close(r, Tensor<float>(cat({Tensor<float>(x * 2.0f), Tensor<float>(x + 1.0f)}, 0) * 3.0f), 0.0);
  // mixed dtypes through AnyTensor: int32 + bfloat16 -> bfloat16 on the device
  const Tensor<int32_t> i = counting<int32_t>(2, 2, -2);
  const Tensor<bfloat16> h = counting<bfloat16>(2, 2, 5);
  const AnyTensor dm = stack(std::vector<AnyTensor>{i.to(test_device()), h.to(test_device())}, 0);
  const AnyTensor hm = stack(std::vector<AnyTensor>{i, h}, 0);
  CHECK(dm.dtype() == ScalarType::BFloat16);
  CHECK(dm.device() == test_device());
  check_close(dm.get<bfloat16>(), hm.get<bfloat16>(), 0.0);
}

TEST_CASE("indexing ops on the device (index_select, gather, take_along_dim, scatter, scatter_add, masked_fill, "
          "one_hot), every mode", "[pjrt][library]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_index_ops<float>();
    check_index_ops<int64_t>();
    const Tensor<int64_t> c = index_of({1, 3, 0, 2}, Dims{2, 2});
    check_close(one_hot(c.to(test_device()), 5), one_hot(c, 5), 0.0);
  }
  check_index_ops<bool>();  // the other dtypes in the default mode
  check_index_ops<uint8_t>();
  check_index_ops<int32_t>();
  check_index_ops<half>();
  check_index_ops<bfloat16>();
  check_index_ops<double>();
  // a 0-dim value on the device: read (as torch reads it), then filled like a number
  const Tensor<float> x = test_input({2, 3}, 75);
  const Tensor<bool> m = Tensor<bool>(x > 0.0f);
  const Tensor<float> v = full<float>(Dims{}, 2.5f);
  check_close(masked_fill(x.to(test_device()), m.to(test_device()), v.to(test_device())), masked_fill(x, m, v), 0.0);
  // NaN, infinities and -0.0 pass through the one-hot lowerings unchanged (found by the
  // conformance sweep: XLA's cpu max-reduce dropped NaN; the lowerings now add -0.0s)
  const Tensor<float> sp = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(), -0.0f,
                            std::numeric_limits<float>::infinity()};
  const Tensor<int64_t> si = index_of({0, 3, 1, 2, 0}, Dims{5});
  const Tensor<float> ds = Tensor<float>(index_select(sp.to(test_device()), 0, si.to(test_device())).cpu());
  check_close(ds, index_select(sp, 0, si), 0.0);
  CHECK(std::signbit(ds.at(3)));
  check_close(scatter(zeros<float>(Dims{4}).to(test_device()), 0, index_of({3, 2, 1, 0}, Dims{4}).to(test_device()),
                      sp.to(test_device())),
              scatter(zeros<float>(Dims{4}), 0, index_of({3, 2, 1, 0}, Dims{4}), sp), 0.0);
  // num_classes = -1 would read the data: not on a device
  CHECK_THROWS_AS(one_hot(index_of({1}, Dims{1}).to(test_device())), UnsupportedOperator);
  // an out-of-range index is a run-time check of the program: the IndexError comes when the
  // result is read (the cpu raises it at the call), and the program never reads out of bounds
  auto read = [](const Tensor<float>& t) { return Tensor<float>(t.cpu()); };
  const Tensor<float> bad = index_select(x.to(test_device()), 1, index_of({7, 1}, Dims{2}).to(test_device()));
  CHECK_THROWS_WITH(read(bad), Catch::Contains("aten::index_select: an index is out of bounds for dimension 1 with size"));
  CHECK_THROWS_AS(read(bad), IndexError);
  CHECK_THROWS_AS(index_select(x, 1, index_of({7, 1}, Dims{2})), IndexError);
  CHECK_THROWS_AS(read(gather(x.to(test_device()), 0, index_of({0, -1}, Dims{1, 2}).to(test_device()))), IndexError);
  CHECK_THROWS_AS(read(scatter(x.to(test_device()), 1, index_of({5}, Dims{1, 1}).to(test_device()), 1.0)), IndexError);
  CHECK_THROWS_AS(Tensor<int64_t>(one_hot(index_of({0, 3}, Dims{2}).to(test_device()), 3).cpu()), IndexError);
  // a later statement that reads a failed one fails too; an unrelated one is unaffected
  CHECK_THROWS_AS(read(Tensor<float>(bad * 2.0f)), IndexError);
  check_close(Tensor<float>(x.to(test_device()) + 1.0f), Tensor<float>(x + 1.0f), 0.0);
  // repeated indices: the last write along `dim` wins on the device as on the cpu
  const Tensor<float> base = zeros<float>(Dims{2, 3}), vals = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  const Tensor<int64_t> rep = index_of({0, 2, 0, 0, 1, 1, 1, 2}, Dims{2, 4});
  const Tensor<float> want = scatter(base, 1, rep, vals);
  CHECK(host_values(want) == std::vector<double>{4, 0, 2, 0, 7, 8});
  check_close(scatter(base.to(test_device()), 1, rep.to(test_device()), vals.to(test_device())), want, 0.0);
}

TEST_CASE("library ops on the device: errors", "[pjrt][library][errors]") {
  const Tensor<float> x = test_input({2, 2}, 73);
  const auto dx = x.to(test_device());
  CHECK_THROWS_AS(cat({dx, x}, 0), ValueError);  // mixed devices
  try {
    (void)cat({dx, Tensor<float>(test_input({3, 3}, 74).to(test_device()))}, 0);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("aten::cat: sizes of tensors must match except in dimension 0 (operands "
                                     "[2, 2] float32, [3, 3] float32)") != std::string::npos);
  }
}

TEST_CASE("embedding on the device: every mode, an out-of-range index is an IndexError", "[pjrt][library][embedding]") {
  const Tensor<float> table = test_input({6, 4}, 81);
  const Tensor<bfloat16> tb = Tensor<bfloat16>(table.to<bfloat16>());
  const Tensor<int64_t> idx = {{5, 0, 5}, {2, 2, 1}};
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_close(embedding(table.to(test_device()), idx.to(test_device())), embedding(table, idx), 0.0);
    check_close(embedding(tb.to(test_device()), Tensor<int32_t>(idx.to<int32_t>()).to(test_device())), embedding(tb, idx),
                0.0);
  }
  const Tensor<float> bad = embedding(table.to(test_device()), Tensor<int64_t>{6}.to(test_device()));
  CHECK_THROWS_AS(Tensor<float>(bad.cpu()), IndexError);
}

TEST_CASE("pad and constant_pad_nd on the device: every dtype, every mode", "[pjrt][library][pad]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_pad_ops<float>();
    check_pad_ops<int64_t>();
  }
  check_pad_ops<bool>();  // the other dtypes in the default mode
  check_pad_ops<uint8_t>();
  check_pad_ops<int32_t>();
  check_pad_ops<half>();
  check_pad_ops<bfloat16>();
  check_pad_ops<double>();
  // NaN, infinities and -0.0 are moved unchanged, and a NaN fill value arrives as NaN
  const Tensor<float> sp = {{std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(), -0.0f,
                             std::numeric_limits<float>::infinity()}};
  const auto dsp = sp.to(test_device());
  for (const char* mode : {"reflect", "replicate", "circular"}) check_close(pad(dsp, {2, 3}, mode), pad(sp, {2, 3}, mode), 0.0);
  const Tensor<float> filled = Tensor<float>(pad(dsp, {1, 1}, "constant", std::numeric_limits<double>::quiet_NaN()).cpu());
  check_close(filled, pad(sp, {1, 1}, "constant", std::numeric_limits<double>::quiet_NaN()), 0.0);
  CHECK(std::isnan(filled.at(0, 0)));
  CHECK(std::signbit(Tensor<float>(pad(dsp, {0, 0}, "reflect").cpu()).at(0, 2)));
  CHECK_THROWS_AS(pad(dsp, {4, 0}, "reflect"), ShapeError);  // infer runs before anything is recorded
}

TEST_CASE("math ops on the device (cumprod, logsumexp, var, std): against the cpu", "[pjrt][library][math]") {
  // Floating results agree to rounding (the device sums in another order, in float32 for
  // float16/bfloat16/float32; the cpu's var/std sum in float64): relative tolerance 1e-5 for
  // float32, 1e-12 for float64, 2e-3 for float16, 1.6e-2 for bfloat16. Integers are exact.
  const auto dev = test_device();
  const Tensor<float> x = test_input({3, 5}, 91);
  const auto dx = x.to(dev);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_close(cumprod(dx, 1), cumprod(x, 1), 1e-5, 1e-6);
    check_close(cumprod(dx.t(), 0), cumprod(x.t(), 0), 1e-5, 1e-6);
    check_close(logsumexp(dx, {1}), logsumexp(x, {1}), 1e-5, 1e-6);
    check_close(logsumexp(dx.t(), {0, 1}, true), logsumexp(x.t(), {0, 1}, true), 1e-5, 1e-6);
    check_close(var(dx, Dims{1}), var(x, Dims{1}), 1e-5, 1e-6);
    check_close(std_dev(dx, Dims{0}, 0, true), std_dev(x, Dims{0}, 0, true), 1e-5, 1e-6);
    check_close(var(dx), var(x), 1e-5, 1e-6);
  }
  const Tensor<double> xd = Tensor<double>(x.to<double>());
  check_close(var(xd.to(dev), Dims{-1}, 2), var(xd, Dims{-1}, 2), 1e-12, 1e-12);
  check_close(logsumexp(xd.to(dev), {0}), logsumexp(xd, {0}), 1e-12, 1e-12);
  check_close(cumprod(xd.to(dev), 0), cumprod(xd, 0), 1e-12, 1e-12);
  const Tensor<half> xh = Tensor<half>(x.to<half>());
  check_close(cumprod(xh.to(dev), 1), cumprod(xh, 1), 2e-3, 2e-3);
  check_close(logsumexp(xh.to(dev), {1}), logsumexp(xh, {1}), 2e-3, 2e-3);
  const Tensor<bfloat16> xb = Tensor<bfloat16>(x.to<bfloat16>());
  check_close(std_dev(xb.to(dev), Dims{1}), std_dev(xb, Dims{1}), 1.6e-2, 1.6e-2);
  check_close(cumprod(xb.to(dev), 1), cumprod(xb, 1), 1.6e-2, 1.6e-2);
  // integers: int64 results, exact; int inputs of logsumexp compute in float32
  const Tensor<int32_t> i = counting<int32_t>(3, 4, -5);
  check_close(cumprod(i.to(dev), 1), cumprod(i, 1), 0.0);
  check_close(cumprod(counting<bool>(2, 3, 1).to(dev), 1), cumprod(counting<bool>(2, 3, 1), 1), 0.0);
  check_close(logsumexp(i.to(dev), {1}), logsumexp(i, {1}), 1e-5, 1e-6);
  // special values: all -inf, +inf, NaN rows; var with correction >= n; empty rows
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor<double> sp = Tensor<double>::empty(Dims{4, 2});
  const double spv[] = {-inf, -inf, inf, 1, nan, 1, inf, -inf};
  for (int k = 0; k < 8; ++k) sp.data_ptr()[k] = spv[k];
  const Tensor<float> spf = Tensor<float>(sp.to<float>());
  check_close(logsumexp(spf.to(dev), {1}), logsumexp(spf, {1}), 0.0);
  const Tensor<float> two = test_input({2, 2}, 92);
  check_close(var(two.to(dev), Dims{1}, 3), var(two, Dims{1}, 3), 0.0);  // inf
  check_close(var(Tensor<float>::empty(Dims{2, 0}).to(dev), Dims{1}), var(Tensor<float>::empty(Dims{2, 0}), Dims{1}), 0.0);
  check_close(logsumexp(Tensor<float>::empty(Dims{2, 0}).to(dev), {1}), logsumexp(Tensor<float>::empty(Dims{2, 0}), {1}), 0.0);
}
