// tests/ops/test_attention.cpp — scaled_dot_product_attention of the operator library
// (ops/attention.hpp) on the cpu, every floating dtype. References: torch 1.13 values pasted as
// literals (torch 1.13 has only `_scaled_dot_product_attention`, same math; the snippet is next
// to the literals), and a naive float64 softmax(q kᵀ scale + mask) v written in this file on
// the same (rounded) inputs: broadcast batch dims, bool and additive masks, is_causal with
// L < S and L > S, a given scale, fully masked rows (0, torch >= 2.5), grouped-query heads,
// sequences longer than the kernel's blocks (64 query rows, 256 keys), non-contiguous operands,
// empty sizes, the aten name (ops::call_by_name) and errors naming the op and the operands.
#include <catch2/catch.hpp>  // TEMPLATE_TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cmath>   // std::exp, std::sqrt, std::fabs, std::isinf
#include <limits>  // std::numeric_limits
#include <string>  // std::string
#include <vector>  // std::vector

#include <torchtpu/core/factories.hpp>  // from_data, rand, Generator
#include <torchtpu/ops/all.hpp>         // ops::call_by_name, ops::Arg
#include <torchtpu/ops/attention.hpp>   // scaled_dot_product_attention
#include <torchtpu/ops/operators.hpp>   // * + (test inputs)

#include "testing.hpp"  // optest: vals, check_near, input, per_dtype

using namespace torchtpu;

using optest::check_near;
using optest::input;
using optest::per_dtype;
using optest::vals;

namespace {

/// Tolerance of a result of dtype T against the float64 reference on the same inputs: the
/// kernel computes in float32 (float64) and rounds once.
template <class T>
double tol() { return per_dtype<T>(1e-12, 2e-6, 2e-3, 1.6e-2); }

Tensor<double> as_double(const AnyTensor& t) {
  return t.visit([]<class U>(const Tensor<U>& x) { return Tensor<double>(x.template to<double>()); });
}

/// Reference: q `[B..., L, E]`, k `[B..., S, E]`, v `[B..., S, Ev]` already broadcast to the
/// result's batch dims (the kernel receives them unbroadcast); `bias` (undefined: none) an
/// additive mask broadcastable to `[B..., L, S]`; a row of -inf scores gives 0.
std::vector<double> ref_sdpa(const Tensor<double>& q, const Tensor<double>& k, const Tensor<double>& v,
                             const Tensor<double>& bias, bool causal, double scale) {
  const int r = q.dim();
  const int64_t L = q.size(-2), E = q.size(-1), S = k.size(-2), Ev = v.size(-1);
  Dims full(q.sizes().begin(), q.sizes().end() - 2);
  full.push_back(L);
  full.push_back(S);
  const Tensor<double> qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
  const Tensor<double> bc = bias.defined() ? bias.expand(full).contiguous() : Tensor<double>();
  const int64_t nb = numel(Dims(q.sizes().begin(), q.sizes().end() - 2));
  (void)r;
  std::vector<double> out(static_cast<size_t>(nb * L * Ev), 0.0), s(static_cast<size_t>(S));
  const double ninf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 0; i < L; ++i) {
      double mx = ninf;
      for (int64_t j = 0; j < S; ++j) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e) d += qc.data_ptr()[(b * L + i) * E + e] * kc.data_ptr()[(b * S + j) * E + e];
        d *= scale;
        if (bc.defined()) d += bc.data_ptr()[(b * L + i) * S + j];
        if (causal && j > i) d = ninf;
        s[size_t(j)] = d;
        mx = std::max(mx, d);
      }
      if (mx == ninf) continue;  // fully masked: 0
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - mx));
      for (int64_t e = 0; e < Ev; ++e) {
        double a = 0;
        for (int64_t j = 0; j < S; ++j) a += s[size_t(j)] * vc.data_ptr()[(b * S + j) * Ev + e];
        out[size_t((b * L + i) * Ev + e)] = a / sum;
      }
    }
  return out;
}

/// A bool mask as the additive float64 mask (0 or -inf).
Tensor<double> additive(const Tensor<bool>& m) {
  const Tensor<bool> c = m.contiguous();
  Tensor<double> r = Tensor<double>::empty(c.sizes());
  for (int64_t i = 0; i < c.numel(); ++i) r.data_ptr()[i] = c.data_ptr()[i] ? 0.0 : -std::numeric_limits<double>::infinity();
  return r;
}

Tensor<bool> random_mask(const Dims& s, uint64_t seed) {
  const Tensor<float> u = input<float>(s, seed, 0.0, 1.0);
  Tensor<bool> m = Tensor<bool>::empty(s);
  for (int64_t i = 0; i < u.numel(); ++i) m.data_ptr()[i] = u.data_ptr()[i] < 0.7f;
  return m;
}

Tensor<float> lit(std::vector<float> v, Dims s) { return from_data(v.data(), s); }

}  // namespace

TEST_CASE("scaled_dot_product_attention: torch 1.13 values (float32)", "[ops][attention]") {
  // torch 1.13:
  //   q = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
  //   k = torch.tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 1.0], [-1.5, 0.5, 0.0], [0.0, -0.25, 1.25]])
  //   v = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0], [2.0, -2.0]])
  //   mask = torch.tensor([[True, False, True, True], [False, False, True, False]])
  //   F._scaled_dot_product_attention(q[None], k[None], v[None], None | mask[None], 0.0, False, is_causal)[0]
  // example-begin sdpa
  const Tensor<float> q = lit({0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.5f}, Dims{2, 3});
  const Tensor<float> k = lit({1.0f, 0.0f, -1.0f, 0.5f, 2.0f, 1.0f, -1.5f, 0.5f, 0.0f, 0.0f, -0.25f, 1.25f}, Dims{4, 3});
  const Tensor<float> v = lit({1.0f, 2.0f, -1.0f, 0.5f, 0.0f, 3.0f, 2.0f, -2.0f}, Dims{4, 2});
  const Tensor<float> y = scaled_dot_product_attention(q, k, v);  // softmax(q kᵀ / sqrt(3)) v: [2, 2]
  // example-end sdpa
  CHECK(y.sizes() == Dims{2, 2});
  check_near(vals(y), {1.301403, -0.993393, 0.523882, 1.171004}, 2e-6, 2e-6);
  Tensor<bool> mask = Tensor<bool>::empty(Dims{2, 4});
  const bool mv[] = {true, false, true, true, false, false, true, false};
  for (int i = 0; i < 8; ++i) mask.data_ptr()[i] = mv[i];
  check_near(vals(scaled_dot_product_attention(q, k, v, mask)), {1.759879, -1.290901, 0.0, 3.0}, 2e-6, 2e-6);
  check_near(vals(scaled_dot_product_attention(q, k, v, {}, 0.0, true)), {1.0, 2.0, 0.345957, 1.509468}, 2e-6, 2e-6);
}

TEMPLATE_TEST_CASE("scaled_dot_product_attention: every floating dtype against float64 references",
                   "[ops][attention]", float, double, half, bfloat16) {
  using T = TestType;
  const double e = tol<T>();
  SECTION("broadcast batch dims, default and given scale") {
    const Tensor<T> q = input<T>({2, 3, 5, 4}, 1), k = input<T>({3, 7, 4}, 2), v = input<T>({1, 1, 7, 3}, 3);
    auto X = [&](const Tensor<T>& t, int64_t r, int64_t c) { return as_double(t).expand(Dims{2, 3, r, c}); };
    const Tensor<T> y = scaled_dot_product_attention(q, k, v);
    CHECK(y.sizes() == Dims{2, 3, 5, 3});
    check_near(vals(y), ref_sdpa(X(q, 5, 4), X(k, 7, 4), X(v, 7, 3), {}, false, 0.5), e, e);
    check_near(vals(scaled_dot_product_attention(q, k, v, {}, 0.0, false, 1.25)),
               ref_sdpa(X(q, 5, 4), X(k, 7, 4), X(v, 7, 3), {}, false, 1.25), e, e);
  }
  SECTION("bool and additive masks, broadcast; fully masked rows give 0") {
    const Tensor<T> q = input<T>({2, 5, 4}, 4), k = input<T>({2, 6, 4}, 5), v = input<T>({2, 6, 3}, 6);
    const Tensor<double> qd = as_double(q), kd = as_double(k), vd = as_double(v);
    Tensor<bool> m = random_mask({2, 1, 6}, 7);  // per batch, broadcast over the query rows
    bool mfv[30];
    const Tensor<bool> mr = random_mask({5, 6}, 8);
    for (int i = 0; i < 30; ++i) mfv[i] = i / 6 == 2 ? false : mr.data_ptr()[i];  // row 2: nothing attended
    const Tensor<bool> mf = from_data(mfv, Dims{5, 6});
    check_near(vals(scaled_dot_product_attention(q, k, v, m)), ref_sdpa(qd, kd, vd, additive(m), false, 0.5), e, e);
    const std::vector<double> got = vals(scaled_dot_product_attention(q, k, v, mf));
    check_near(got, ref_sdpa(qd, kd, vd, additive(mf), false, 0.5), e, e);
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) CHECK(got[size_t((b * 5 + 2) * 3 + c)] == 0.0);
    const Tensor<T> fm = input<T>({6}, 9, -3.0, 1.0);  // additive, [S]: broadcast over rows and batch
    check_near(vals(scaled_dot_product_attention(q, k, v, fm)), ref_sdpa(qd, kd, vd, as_double(fm), false, 0.5), e, e);
    // an additive mask with -inf entries (a fully masked row included)
    Tensor<double> inf = as_double(input<T>({5, 6}, 10));
    for (int j = 0; j < 6; ++j) inf.data_ptr()[4 * 6 + j] = -std::numeric_limits<double>::infinity();
    inf.data_ptr()[1] = -std::numeric_limits<double>::infinity();
    const Tensor<T> inft = Tensor<T>(inf.to<T>());
    check_near(vals(scaled_dot_product_attention(q, k, v, inft)), ref_sdpa(qd, kd, vd, as_double(inft), false, 0.5), e, e);
  }
  SECTION("is_causal: top-left aligned for L < S and L > S") {
    for (auto [L, S] : {std::pair<int64_t, int64_t>{4, 6}, {6, 4}, {5, 5}}) {
      INFO("L " << L << ", S " << S);
      const Tensor<T> q = input<T>({3, L, 4}, 11), k = input<T>({3, S, 4}, 12), v = input<T>({3, S, 2}, 13);
      check_near(vals(scaled_dot_product_attention(q, k, v, {}, 0.0, true)),
                 ref_sdpa(as_double(q), as_double(k), as_double(v), {}, true, 0.5), e, e);
    }
  }
  SECTION("grouped-query attention: 4 query heads on 2 key heads") {
    const Tensor<T> q = input<T>({2, 4, 3, 4}, 14), k = input<T>({2, 2, 5, 4}, 15), v = input<T>({2, 2, 5, 3}, 16);
    // reference: key heads repeated (repeat_interleave over dim 1)
    auto rep = [](const Tensor<double>& t) {
      const Dims s = t.sizes();
      return Tensor<double>(t.unsqueeze(2).expand(Dims{s[0], s[1], 2, s[2], s[3]}).contiguous().reshape(Dims{s[0], 4, s[2], s[3]}));
    };
    check_near(vals(scaled_dot_product_attention(q, k, v, {}, 0.0, true, std::nullopt, true)),
               ref_sdpa(as_double(q), rep(as_double(k)), rep(as_double(v)), {}, true, 0.5), e, e);
    CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v), ShapeError);  // without enable_gqa: 4 vs 2 heads
  }
  SECTION("sequences longer than the kernel's blocks; non-contiguous operands") {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const Tensor<T> q = input<T>({70, 2, 8}, 17), k = input<T>({2, 600, 8}, 18), v = input<T>({2, 600, 5}, 19);
      const Tensor<T> qt = q.transpose(0, 1);  // [2, 70, 8], strided
      REQUIRE(!qt.is_contiguous());
      const Tensor<bool> m = random_mask({70, 600}, 20);
      const double sc = 1 / std::sqrt(8.0);
      check_near(vals(scaled_dot_product_attention(qt, k, v, m)),
                 ref_sdpa(as_double(qt), as_double(k), as_double(v), additive(m), false, sc), e, e);
      check_near(vals(scaled_dot_product_attention(qt, k, v, {}, 0.0, true)),
                 ref_sdpa(as_double(qt), as_double(k), as_double(v), {}, true, sc), e, e);
      // large scores: the running maximum grows block by block
      check_near(vals(scaled_dot_product_attention(qt, k, v, {}, 0.0, false, 8.0)),
                 ref_sdpa(as_double(qt), as_double(k), as_double(v), {}, false, 8.0), 20 * e, 20 * e);
    }
  }
  SECTION("run-time typed (AnyTensor) and by aten name") {
    const Tensor<T> q = input<T>({2, 3, 4}, 21), k = input<T>({2, 5, 4}, 22), v = input<T>({2, 5, 2}, 23);
    const Tensor<bool> m = random_mask({3, 5}, 24);
    const auto want = ref_sdpa(as_double(q), as_double(k), as_double(v), additive(m), false, 0.75);
    const AnyTensor r = scaled_dot_product_attention(AnyTensor(q), AnyTensor(k), AnyTensor(v), AnyTensor(m), 0.0, false, 0.75);
    CHECK(r.dtype() == dtype_of<T>());
    check_near(vals(r.template get<T>()), want, e, e);
    const std::vector<ops::Arg> args = {AnyTensor(q), AnyTensor(k), AnyTensor(v), AnyTensor(m), 0.0, false, 0.75};
    check_near(vals(ops::call_by_name("aten::scaled_dot_product_attention", args).template get<T>()), want, e, e);
    const std::vector<ops::Arg> none = {AnyTensor(q), AnyTensor(k), AnyTensor(v), ops::Arg(), 0.0, true};
    check_near(vals(ops::call_by_name("aten::scaled_dot_product_attention", none).template get<T>()),
               ref_sdpa(as_double(q), as_double(k), as_double(v), {}, true, 0.5), e, e);
  }
  SECTION("empty sizes") {
    CHECK(scaled_dot_product_attention(input<T>({0, 3, 4}, 1), input<T>({0, 5, 4}, 2), input<T>({0, 5, 2}, 3)).sizes() ==
          Dims{0, 3, 2});
    CHECK(scaled_dot_product_attention(input<T>({2, 0, 4}, 1), input<T>({2, 5, 4}, 2), input<T>({2, 5, 2}, 3)).sizes() ==
          Dims{2, 0, 2});
    // no keys: softmax over nothing, the result 0 (torch: an empty product)
    const Tensor<T> y = scaled_dot_product_attention(input<T>({2, 3, 4}, 1), input<T>({2, 0, 4}, 2), input<T>({2, 0, 2}, 3));
    CHECK(y.sizes() == Dims{2, 3, 2});
    for (double x : vals(y)) CHECK(x == 0.0);
    // E = 0: every score 0, the mean of v
    const Tensor<T> v = input<T>({1, 4, 2}, 4);
    const std::vector<double> vv = vals(v);
    const std::vector<double> mean{(vv[0] + vv[2] + vv[4] + vv[6]) / 4, (vv[1] + vv[3] + vv[5] + vv[7]) / 4};
    check_near(vals(scaled_dot_product_attention(input<T>({1, 1, 0}, 5), input<T>({1, 4, 0}, 6), v)), mean, e, e);
  }
}

TEST_CASE("scaled_dot_product_attention: errors name the op and the operands", "[ops][attention][errors]") {
  const Tensor<float> q = input<float>({2, 3, 4}, 1), k = input<float>({2, 5, 4}, 2), v = input<float>({2, 5, 2}, 3);
  auto throws = [](auto f, const std::string& what) {
    try {
      f();
      FAIL("expected an error containing " + what);
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(what));
    }
  };
  CHECK_THROWS_AS(scaled_dot_product_attention(q, input<float>({2, 5, 3}, 4), v), ShapeError);
  throws([&] { scaled_dot_product_attention(q, input<float>({2, 5, 3}, 4), v); },
         "aten::scaled_dot_product_attention: expected key's last dim to equal query's (E = 4) (operands [2, 3, 4] "
         "float32, [2, 5, 3] float32, [2, 5, 2] float32)");
  throws([&] { scaled_dot_product_attention(q, k, input<float>({2, 6, 2}, 4)); }, "expected value's dim -2 to equal key's (S = 5)");
  CHECK_THROWS_AS(scaled_dot_product_attention(q, input<float>({3, 5, 4}, 4), input<float>({3, 5, 2}, 5)), ShapeError);
  throws([&] { scaled_dot_product_attention(input<float>({4}, 1), k, v); }, "at least 2 dims");
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, {}, 0.1), ValueError);
  throws([&] { scaled_dot_product_attention(q, k, v, {}, 0.1); }, "aten::scaled_dot_product_attention: dropout_p=0.1");
  const Tensor<bool> m = random_mask({3, 5}, 5);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, m, 0.0, true), ValueError);
  throws([&] { scaled_dot_product_attention(q, k, v, random_mask({4, 5}, 6)); },
         "aten::scaled_dot_product_attention: attn_mask [4, 5] does not broadcast to the scores [2, 3, 5]");
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, random_mask({4, 5}, 6)), ShapeError);
  // mask dtype: bool or the query's
  const Tensor<double> md = input<double>({3, 5}, 7);
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, md), TypeError);
  throws([&] { scaled_dot_product_attention(q, k, v, md); }, "expected attn_mask of dtype bool or the query's dtype");
  // operand dtypes: one floating dtype
  throws([&] { scaled_dot_product_attention(AnyTensor(q), AnyTensor(Tensor<double>(k.to<double>())), AnyTensor(v)); },
         "expected query, key and value of one floating point dtype (operands [2, 3, 4] float32, [2, 5, 4] float64");
  const Tensor<int32_t> qi = Tensor<int32_t>(q.to<int32_t>());
  CHECK_THROWS_AS(scaled_dot_product_attention(AnyTensor(qi), AnyTensor(qi), AnyTensor(qi)), TypeError);
  // grouped-query heads that do not divide
  const Tensor<float> q3 = input<float>({3, 2, 4}, 8), k2 = input<float>({2, 5, 4}, 9), v2 = input<float>({2, 5, 2}, 10);
  CHECK_THROWS_AS(scaled_dot_product_attention(q3, k2, v2, {}, 0.0, false, std::nullopt, true), ValueError);
  throws([&] { scaled_dot_product_attention(q3, k2, v2, {}, 0.0, false, std::nullopt, true); },
         "enable_gqa: the query's 3 heads (dim -3) must be a multiple of the key's 2");
  // by name: a tensor where a float belongs
  CHECK_THROWS_AS(ops::call_by_name("aten::scaled_dot_product_attention",
                                    std::vector<ops::Arg>{AnyTensor(q), AnyTensor(k), AnyTensor(v), ops::Arg(), AnyTensor(q)}),
                  TypeError);
}
