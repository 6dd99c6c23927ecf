// tests/device_ops/test_device_linalg.cpp — the linear-algebra ops of the operator library
// (ops/linalg.hpp: einsum, vector norms, addmm, baddbmm, outer, lerp, nan_to_num) on the PJRT
// device under test, in each execution mode, against the same calls on the cpu (which
// tests/ops/test_linalg.cpp checks against torch) and against torch literals.
//
// Tolerance: matrix products run at `MatmulPrecision::Highest` here (f32-exact on the emulator;
// the default precision multiplies bf16-rounded operands on a TPU, checked separately with a
// bf16-sized tolerance). Sums run in another order than the cpu's: 1e-5 for float32, 1e-12 for
// float64, 4e-3 for float16 and 3.2e-2 for bfloat16 (relative + absolute, results O(1)-O(10)).
#include <limits>  // std::numeric_limits
#include <string>  // std::string
#include <vector>  // std::vector

#include <torchtpu/ops/linalg.hpp>  // einsum, vector_norm, addmm, baddbmm, outer, lerp, nan_to_num

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-5, 4e-3, 3.2e-2); }

/// Floating: `test_input` as T; integers: small values in [-4, 4].
template <class T>
Tensor<T> operand(const Dims& s, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  if constexpr (floating_element<T>) return Tensor<T>(test_input(s, seed, lo, hi).template to<T>());
  else return Tensor<T>(Tensor<float>(test_input(s, seed, -4, 4)).template to<T>());  // small integers
}

template <class T>
void check_linalg() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>() * (floating_element<T> ? 4 : 1);  // products of several terms
  // einsum: batched matmul, diagonal, trace, outer, ellipsis, attention scores, three operands,
  // size-1 broadcasting, a transposed operand
  const Tensor<T> a = operand<T>({2, 3, 4}, 1), b = operand<T>({2, 4, 5}, 2), m = operand<T>({3, 3}, 3), u = operand<T>({3}, 4),
                  v = operand<T>({4}, 5), q = operand<T>({2, 2, 3, 4}, 6), k = operand<T>({2, 2, 5, 4}, 7);
  const auto da = a.to(dev), db = b.to(dev), dm = m.to(dev), du = u.to(dev), dv = v.to(dev), dq = q.to(dev), dk = k.to(dev);
  check_close(einsum("bij,bjk->bik", {da, db}), einsum("bij,bjk->bik", {a, b}), e, e);
  check_close(einsum("ii->i", {dm}), einsum("ii->i", {m}), e, e);
  check_close(einsum("ii", {dm}), einsum("ii", {m}), e, e);
  check_close(einsum("i,j->ij", {du, dv}), einsum("i,j->ij", {u, v}), e, e);
  check_close(einsum("...ij,...jk", {da, db}), einsum("...ij,...jk", {a, b}), e, e);
  check_close(einsum("bhqd,bhkd->bhqk", {dq, dk}), einsum("bhqd,bhkd->bhqk", {q, k}), e, e);
  check_close(einsum("ij,jk,kl->il", {dm, dm, Tensor<T>(dm.t())}), einsum("ij,jk,kl->il", {m, m, Tensor<T>(m.t())}), e, e);
  const Tensor<T> col = operand<T>({3, 1}, 8);
  check_close(einsum("ij,kj->ik", {col.to(dev), dm}), einsum("ij,kj->ik", {col, m}), e, e);
  check_close(einsum("bij->", {da}), einsum("bij->", {a}), e, e);
  // addmm, baddbmm: default scalars, scaled, beta = 0, a broadcast self
  const Tensor<T> s = operand<T>({3, 5}, 9), bias = operand<T>({5}, 10), m1 = operand<T>({3, 4}, 11), m2 = operand<T>({4, 5}, 12);
  const auto ds = s.to(dev), dbias = bias.to(dev), dm1 = m1.to(dev), dm2 = m2.to(dev);
  check_close(addmm(ds, dm1, dm2), addmm(s, m1, m2), e, e);
  check_close(addmm(dbias, dm1, dm2, 0.5, 2), addmm(bias, m1, m2, 0.5, 2), e, e);
  check_close(addmm(ds, dm1, dm2, 0, 3), addmm(s, m1, m2, 0, 3), e, e);
  check_close(baddbmm(dbias, da, db), baddbmm(bias, a, b), e, e);
  check_close(baddbmm(Tensor<T>(db.select(1, 0).unsqueeze(1)), da, db, 2, 3), baddbmm(Tensor<T>(b.select(1, 0).unsqueeze(1)), a, b, 2, 3), e, e);
  // outer
  check_close(outer(du, dv), outer(u, v), e, e);
  if constexpr (floating_element<T>) {
    // vector norms: every kind of p, dims, keepdim
    for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
      INFO("p = " << p);
      check_close(vector_norm(da, p), vector_norm(a, p), e, e);
      check_close(vector_norm(da, p, Dims{-1}), vector_norm(a, p, Dims{-1}), e, e);
      check_close(vector_norm(da, p, Dims{0, 2}, true), vector_norm(a, p, Dims{0, 2}, true), e, e);
    }
    // lerp: scalar and tensor weights, broadcasting
    const Tensor<T> w = operand<T>({3, 4}, 13, -0.5, 1.5);
    check_close(lerp(da, Tensor<T>(da * convert<T>(2)), 0.3), lerp(a, Tensor<T>(a * convert<T>(2)), 0.3), e, e);
    check_close(lerp(da, db.select(2, 0).unsqueeze(1), w.to(dev)), lerp(a, b.select(2, 0).unsqueeze(1), w), e, e);
    // nan_to_num: NaN, ±inf, defaults and given values
    const double inf = std::numeric_limits<double>::infinity();
    const Tensor<T> special = Tensor<T>(Tensor<double>{std::numeric_limits<double>::quiet_NaN(), inf, -inf, 1.5}.template to<T>());
    const auto dspecial = special.to(dev);
    check_close(nan_to_num(dspecial), nan_to_num(special), 0, 0);
    check_close(nan_to_num(dspecial, 2.0, 1e39, -7.0), nan_to_num(special, 2.0, 1e39, -7.0), 0, 0);
  } else {
    check_close(nan_to_num(da), a, 0, 0);
  }
}

}  // namespace

TEST_CASE("linalg ops on the device: every dtype, every mode", "[pjrt][library][linalg]") {
  MatmulPrecisionGuard p(MatmulPrecision::Highest);
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_linalg<float>();
  }
  check_linalg<double>();  // the other dtypes in the default mode
  check_linalg<half>();
  check_linalg<bfloat16>();
  check_linalg<int32_t>();
  check_linalg<int64_t>();
}

TEST_CASE("linalg ops on the device: torch literals, default precision, run-time typed, errors", "[pjrt][library][linalg]") {
  const auto dev = test_device();
  // torch.einsum('bij,bjk->bik', a, b) with a = (torch.arange(24.) % 7 - 3).reshape(2,3,4),
  // b = (torch.arange(40.) % 5 - 2).reshape(2,4,5) (small integers: exact at every precision)
  Tensor<double> av = Tensor<double>::empty(Dims{2, 3, 4}), bv = Tensor<double>::empty(Dims{2, 4, 5});
  for (int i = 0; i < 24; ++i) av.data_ptr()[i] = i % 7 - 3;
  for (int i = 0; i < 40; ++i) bv.data_ptr()[i] = i % 5 - 2;
  const Tensor<float> a = av.to<float>(), b = bv.to<float>();
  const Tensor<float> r = einsum("bij,bjk->bik", {a.to(dev), b.to(dev)});
  const std::vector<double> want = {12, 6, 0, -6, -12, -6, -3, 0, 3, 6, 4, 2, 0, -2, -4,
                                    0, 0, 0, 0, 0, -4, -2, 0, 2, 4, 6, 3, 0, -3, -6};
  const Tensor<double> got = Tensor<float>(r.cpu()).to<double>();
  CHECK(std::vector<double>(got.data_ptr(), got.data_ptr() + got.numel()) == want);
  // the default precision (bf16 operands on a TPU): a bf16-sized tolerance
  const Tensor<float> x = test_input({8, 16}, 21), w = test_input({16, 8}, 22), bias = test_input({8}, 23);
  check_close(addmm(bias.to(dev), x.to(dev), w.to(dev)), addmm(bias, x, w), 3e-2, 3e-2);
  check_close(einsum("ij,jk->ik", {x.to(dev), w.to(dev)}), einsum("ij,jk->ik", {x, w}), 3e-2, 3e-2);
  // AnyTensor operands: the result stays on the device
  const AnyTensor n = vector_norm(AnyTensor(x.to(dev)), 2, Dims{1});
  CHECK(n.device() == dev);
  check_close(n.get<float>(), vector_norm(x, 2, Dims{1}), 1e-5, 1e-5);
  // infer runs before anything is recorded: the cpu's errors
  CHECK_THROWS_AS(einsum("ij,jk", {x.to(dev), x.to(dev)}), ValueError);
  CHECK_THROWS_AS(addmm(bias.to(dev), x.to(dev), x.to(dev)), ShapeError);
  CHECK_THROWS_AS(vector_norm(Tensor<float>::empty(Dims{0, 3}).to(dev), std::numeric_limits<double>::infinity()), ValueError);
  CHECK_THROWS_AS(outer(x.to(dev), bias.to(dev)), ShapeError);
}
