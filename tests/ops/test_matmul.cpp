// matmul (torch.matmul rules: 1-D, 2-D, batched with broadcast batch dims), bmm, linear, the
// fused epilogue, aliasing destinations, dtypes and shape errors. References are float64
// loops over element accessors (no library arithmetic).
#include "testing.hpp"  // check_values, values_of

using namespace torchtpu;

namespace {

template <class A, class B> constexpr bool has_matmul = requires(A a, B b) { matmul(a, b); };

/// torch.matmul in float64 by definition: sum_k a[..., i, k] * b[..., k, j].
std::vector<double> ref_matmul(Tensor<double> a, Tensor<double> b) {
  const bool va = a.dim() == 1, vb = b.dim() == 1;
  if (va) a = a.unsqueeze(0);
  if (vb) b = b.unsqueeze(1);
  const Dims ba(a.sizes().begin(), a.sizes().end() - 2), bb(b.sizes().begin(), b.sizes().end() - 2);
  const Dims batch = broadcast_shapes(ba, bb, "ref");
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  Dims sa = batch, sb = batch;
  sa.push_back(m); sa.push_back(k);
  sb.push_back(k); sb.push_back(n);
  const Tensor<double> ea = a.expand(sa), eb = b.expand(sb);
  std::vector<double> out;
  std::vector<int64_t> ia(size_t(sa.size())), ib(size_t(sb.size()));
  const int nb = batch.size();
  for (int64_t t = 0; t < numel(batch); ++t) {
    int64_t rem = t;
    for (int j = nb - 1; j >= 0; --j) { ia[size_t(j)] = ib[size_t(j)] = rem % batch[j]; rem /= batch[j]; }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          ia[size_t(nb)] = i; ia[size_t(nb) + 1] = p;
          ib[size_t(nb)] = p; ib[size_t(nb) + 1] = j;
          s += ea.at(std::span<const int64_t>(ia)) * eb.at(std::span<const int64_t>(ib));
        }
        out.push_back(s);
      }
  }
  return out;
}

Tensor<float> randn_f(const Dims& s, uint64_t seed) {
  Generator g(seed);
  return randn<float>(s, g);
}

void check_matmul(const Tensor<float>& a, const Tensor<float>& b, const Dims& want_shape) {
  INFO("a " << to_string(a.sizes()) << " @ b " << to_string(b.sizes()));
  Tensor<float> r = matmul(a, b);
  CHECK(r.sizes() == want_shape);
  check_values(r, ref_matmul(to<double>(a), to<double>(b)), 1e-5, 1e-4);  // k up to 300
}

}  // namespace

TEST_CASE("matmul follows torch.matmul's shape rules", "[ops][matmul]") {
  check_matmul(randn_f({3}, 1), randn_f({3}, 2), Dims{});                       // dot
  check_matmul(randn_f({3}, 1), randn_f({3, 5}, 2), Dims{5});                   // vec @ mat
  check_matmul(randn_f({4, 3}, 1), randn_f({3}, 2), Dims{4});                   // mat @ vec
  check_matmul(randn_f({4, 3}, 1), randn_f({3, 5}, 2), Dims{4, 5});
  check_matmul(randn_f({2, 4, 3}, 1), randn_f({3, 5}, 2), Dims{2, 4, 5});       // batch @ mat
  check_matmul(randn_f({4, 3}, 1), randn_f({2, 3, 5}, 2), Dims{2, 4, 5});       // mat @ batch
  check_matmul(randn_f({2, 1, 4, 3}, 1), randn_f({5, 3, 2}, 2), Dims{2, 5, 4, 2});  // broadcast
  check_matmul(randn_f({3}, 1), randn_f({2, 3, 5}, 2), Dims{2, 5});             // vec @ batch
  check_matmul(randn_f({2, 40, 3}, 1), randn_f({3}, 2), Dims{2, 40});           // batch @ vec
  check_matmul(randn_f({70, 300}, 3), randn_f({300, 530}, 4), Dims{70, 530});   // > one tile
}

TEST_CASE("matmul of non-contiguous operands", "[ops][matmul][strided]") {
  const Tensor<float> a = randn_f({5, 4}, 5), b = randn_f({6, 5}, 6);
  check_matmul(a.t(), b.t(), Dims{4, 6});                        // both transposed
  check_matmul(a.slice(0, 0, 5, 2), a.t(), Dims{3, 5});          // stepped rows
  check_matmul(a.slice(1, 1, 4, 2).t(), a, Dims{2, 4});          // stepped columns, transposed
  check_matmul(randn_f({4}, 7).unsqueeze(0).expand({3, 4}), a.t(), Dims{3, 5});  // stride-0 rows
  check_matmul(randn_f({3, 2, 4}, 8).permute({1, 0, 2}), randn_f({4, 2}, 9), Dims{2, 3, 2});
}

TEST_CASE("matmul with empty and zero-size contracted dims", "[ops][matmul][empty]") {
  Tensor<float> r = matmul(zeros<float>({3, 0}), zeros<float>({0, 2}));
  check_values(r, {0, 0, 0, 0, 0, 0});  // k = 0: zeros
  CHECK(matmul(zeros<float>({0, 3}), zeros<float>({3, 2})).eval().sizes() == Dims{0, 2});
  CHECK(matmul(zeros<float>({2, 0, 3}), zeros<float>({3, 4})).eval().sizes() == Dims{2, 0, 4});
  // A batched k = 0 operand whose batch stride is not 0 (a permuted [0, 6, 3]: strides 3, 1, 18),
  // batch 6 (past the small-batch path, through for_each_batch): all zeros. Clang's UBSan
  // reported a null base offset per batch on a case of this kind (fuzz_jit_graph,
  // corpus/jit_graph/repro_matmul_empty_operand_null_offset); GCC's UBSan does not check
  // null + offset, so only scripts/fuzz sees that report.
  Tensor<float> a = zeros<float>({0, 6, 3}).permute({1, 2, 0});
  REQUIRE(a.sizes() == Dims{6, 3, 0});
  REQUIRE(a.strides()[0] != 0);
  Tensor<float> z = matmul(a, ones<float>({6, 0, 4}));
  REQUIRE(z.sizes() == Dims{6, 3, 4});
  check_values(z, std::vector<double>(72, 0.0));
}

TEST_CASE("matmul dtypes: int, double, bf16 (f32 accumulation), mixed promotion", "[ops][matmul][dtype]") {
  Tensor<int64_t> ia = {{1, 2}, {3, 4}};
  Tensor<int64_t> ib = {{5, 6}, {7, 8}};
  auto ip = matmul(ia, ib);
  STATIC_REQUIRE(std::same_as<decltype(ip)::value_type, int64_t>);
  check_values(ip, {19, 22, 43, 50});
  STATIC_REQUIRE(std::same_as<decltype(matmul(Tensor<float>{}, Tensor<double>{}))::value_type, double>);
  STATIC_REQUIRE(std::same_as<decltype(matmul(Tensor<int32_t>{}, Tensor<float>{}))::value_type, float>);
  check_values(matmul(Tensor<int32_t>{1, 2}, Tensor<float>{0.5f, 0.25f}), {1.0});
  // bf16: 256 products of 1 * 1 accumulate exactly in float (bf16 accumulation would stall at 256)
  Tensor<bfloat16> o = ones<bfloat16>({2, 300});
  auto p16 = matmul(o, o.t());
  STATIC_REQUIRE(std::same_as<decltype(p16)::value_type, bfloat16>);
  check_values(p16, {300, 300, 300, 300});  // 300 is exact in bf16 (0x4396)
  Tensor<bfloat16> c16 = ones<bfloat16>({1, 257});
  check_values(matmul(c16, c16.t()), {256});  // 257 rounds to 256 in bf16 only at the end
}

TEST_CASE("bmm and linear", "[ops][matmul]") {
  const Tensor<float> a = randn_f({3, 2, 4}, 11), b = randn_f({3, 4, 5}, 12);
  Tensor<float> r = bmm(a, b);
  CHECK(r.sizes() == Dims{3, 2, 5});
  check_values(r, ref_matmul(to<double>(a), to<double>(b)), 1e-5, 1e-5);
  CHECK_THROWS_AS(bmm(a, randn_f({2, 4, 5}, 1)), ShapeError);
  CHECK_THROWS_WITH(bmm(Tensor<float>(randn_f({2, 4}, 1)), b),
                    "bmm: expected two 3-D tensors with equal batch sizes, got [2, 4] and [3, 4, 5]");
  // example-begin linear
  Tensor<float> x = {{1, 2, 3}, {4, 5, 6}};  // [batch 2, in 3]
  Tensor<float> w = {{1, 0, -1}, {2, 1, 0}};  // [out 2, in 3]
  Tensor<float> bias = {10, 20};
  Tensor<float> y = linear(x, w, bias);        // x @ w.T + bias -> [2, 2]
  // example-end linear
  check_values(y, {1 - 3 + 10, 2 + 2 + 20, 4 - 6 + 10, 8 + 5 + 20});
  check_values(linear(x, w), {-2, 4, -2, 13});
  check_values(linear(Tensor<float>{1, 1, 1}, w, bias), {10, 23});
  CHECK_THROWS_AS(linear(x, Tensor<float>{1, 2, 3}), ShapeError);
  CHECK_THROWS_AS(linear(x, Tensor<float>{{1, 2}, {3, 4}}), ShapeError);
}

TEST_CASE("matmul with a fused epilogue equals the unfused result", "[ops][matmul][fusion]") {
  const Tensor<float> x = randn_f({37, 19}, 21), w = randn_f({19, 45}, 22), b = randn_f({45}, 23);
  // example-begin matmul-epilogue
  Tensor<float> y = relu(matmul(x, w) + b);  // the epilogue runs per output tile
  // example-end matmul-epilogue
  Tensor<float> p = matmul(x, w);
  Tensor<float> unfused = p + b;
  unfused = relu(unfused);
  check_values(y, values_of(unfused), 1e-6, 1e-6);
  // batched product with a broadcast residual, and a mat-vec product inside an expression
  const Tensor<float> xb = randn_f({2, 40, 3}, 24), v = randn_f({3}, 25);
  Tensor<float> mv = matmul(xb, v) * 2.0f + 1.0f;
  std::vector<double> want = ref_matmul(to<double>(xb), to<double>(v));
  for (double& d : want) d = d * 2 + 1;
  check_values(mv, want, 1e-5, 1e-5);
  // an epilogue that reads another matmul
  Tensor<float> two = matmul(x, w) - matmul(x, w);
  check_values(abs(two).max(), {0});
}

TEST_CASE("matmul results written into an operand (aliasing)", "[ops][matmul][alias]") {
  // x += x @ w reads x while the product is written: must equal the unfused result
  Tensor<float> x = {{1, 2}, {3, 4}};
  const Tensor<float> w = {{0, 1}, {1, 0}};
  x += matmul(x, w);
  check_values(x, {3, 3, 7, 7});
  Tensor<float> y = {{1, 2}, {3, 4}};
  y.copy_(matmul(y, w));  // a plain product into its own operand
  check_values(y, {2, 1, 4, 3});
  Tensor<float> z = {{1, 2}, {3, 4}};
  z.copy_(relu(matmul(w, z) - 2.0f));
  check_values(z, {1, 2, 0, 0});
  Tensor<float> t = {{1, 2}, {3, 4}};
  t.copy_(matmul(t.t(), w) + t);  // product of a view of the destination, plus the destination
  check_values(t, {4, 3, 7, 6});  // [[3, 1], [4, 2]] + t
}

TEST_CASE("matmul shape errors", "[ops][matmul][errors]") {
  Tensor<float> a = zeros<float>({2, 3});
  Tensor<float> b = zeros<float>({4, 5});
  CHECK_THROWS_AS(matmul(a, b), ShapeError);
  CHECK_THROWS_WITH(matmul(a, b), "matmul: [2, 3] @ [4, 5]: contracted sizes 3 and 4 differ");
  CHECK_THROWS_WITH(matmul(zeros<float>({3}), zeros<float>({4})),
                    "matmul: [3] @ [4]: contracted sizes 3 and 4 differ");
  CHECK_THROWS_WITH(matmul(zeros<float>({2, 2, 3}), zeros<float>({3, 3, 1})),
                    Catch::StartsWith("matmul: [2, 2, 3] @ [3, 3, 1]: batch dims: shapes [2] and [3] cannot be broadcast"));
  CHECK_THROWS_AS(matmul(Tensor<float>(full<float>({}, 1.0f)), a), ShapeError);
  STATIC_REQUIRE(!has_matmul<Tensor<bool>, Tensor<bool>>);
  STATIC_REQUIRE(has_matmul<Tensor<bool>, Tensor<float>>);  // promotes to float32
  STATIC_REQUIRE(has_matmul<Tensor<uint8_t>, Tensor<uint8_t>>);
}
