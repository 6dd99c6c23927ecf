// tests/ops/test_linalg.cpp — the operator library's linear-algebra family on the cpu (einsum,
// linalg_vector_norm / norm / frobenius_norm, addmm, baddbmm, outer, lerp, nan_to_num) through
// the typed API for every dtype each allows, the run-time typed API (AnyTensor) and the call by
// schema (model graphs). Expected values: torch 1.13 (/usr/bin/python3) on the same inputs,
// pasted as literals (the script is quoted above each block); the device path is
// tests/device_ops/test_device_linalg.cpp.
#include <cmath>    // std::isnan, std::isinf
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/ops/all.hpp>  // ops::call_by_name, torchtpu::einsum, ...

#include "testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

using optest::make;
using optest::message_of;

using optest::per_dtype;

namespace {

/// A tolerance that fits T's precision (a few ulps of results of magnitude ~10).
template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-6, 4e-3, 3.2e-2); }

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<double> iota_mod(int n, int mod, double shift, double scale = 1) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back((i % mod - shift) * scale);
  return v;
}

/// The first operand's result through the call by schema (what a model graph runs).
AnyTensor by_name(std::string_view aten, std::vector<ops::Arg> args) { return ops::call_by_name(aten, args); }

}  // namespace

// a = (torch.arange(24.) % 7 - 3).reshape(2,3,4); b = (torch.arange(40.) % 5 - 2).reshape(2,4,5)
// torch.einsum('bij,bjk->bik', a, b); m = torch.arange(9.).reshape(3,3) - 4: 'ii->i', 'ii';
// u = [1, -2, 3], v = [2, 0.5, -1, 4]: 'i,j->ij'; A = [[1,2],[3,4],[-1,0]], B = [[1,-1,2],[0,1,1]],
// C = [[2,1],[1,-3],[0,1]]: 'ij,jk,kl->il', 'ij,jk,kl->'; 'ij->ji', 'ij->', 'ji'
// (integer dtypes: the same values where they are integers, exact)
TEMPLATE_TEST_CASE("einsum: every dtype, typed API", "[ops][linalg][einsum]", uint8_t, int32_t, int64_t, half, bfloat16,
                   float, double) {
  using T = TestType;
  const double e = tol<T>();
  if constexpr (!std::is_same_v<T, uint8_t>) {
    const Tensor<T> a = make<T>(iota_mod(24, 7, 3), Dims{2, 3, 4}), b = make<T>(iota_mod(40, 5, 2), Dims{2, 4, 5});
    // example-begin einsum
    const Tensor<T> r = einsum("bij,bjk->bik", {a, b});
    // example-end einsum
    CHECK(r.sizes() == Dims{2, 3, 5});
    check_values(r, {12, 6, 0, -6, -12, -6, -3, 0, 3, 6, 4, 2, 0, -2, -4, 0, 0, 0, 0, 0, -4, -2, 0, 2, 4, 6, 3, 0, -3, -6}, e, e);
    const Tensor<T> m = make<T>({-4, -3, -2, -1, 0, 1, 2, 3, 4}, Dims{3, 3});
    check_values(einsum("ii->i", {m}), {-4, 0, 4});
    CHECK(einsum("ii", {m}).sizes() == Dims{});
    check_values(einsum("ii", {m}), {0});
    const Tensor<T> u = make<T>({1, -2, 3}, Dims{3}), v = make<T>({2, 1, -1, 4}, Dims{4});
    check_values(einsum("i,j->ij", {u, v}), {2, 1, -1, 4, -4, -2, 2, -8, 6, 3, -3, 12}, e, e);
    const Tensor<T> A = make<T>({1, 2, 3, 4, -1, 0}, Dims{3, 2}), B = make<T>({1, -1, 2, 0, 1, 1}, Dims{2, 3}),
                    C = make<T>({2, 1, 1, -3, 0, 1}, Dims{3, 2});
    check_values(einsum("ij,jk,kl->il", {A, B, C}), {3, 2, 7, 10, -1, -6}, e, e);
    check_values(einsum("ij,jk,kl->", {A, B, C}), {15}, e, e);
    check_values(einsum("ij->ji", {A}), {1, 3, -1, 2, 4, 0});
    check_values(einsum("ji", {A}), {1, 3, -1, 2, 4, 0});
    check_values(einsum("ij->", {A}), {9}, e, e);
  } else {
    const Tensor<T> A = make<T>({1, 2, 3, 4, 5, 0}, Dims{3, 2}), B = make<T>({1, 3, 2, 0, 1, 1}, Dims{2, 3});
    // torch.einsum('ij,jk', A.byte(), B.byte()) (no wrap at these sizes)
    check_values(einsum("ij,jk", {A, B}), {1, 5, 4, 3, 13, 10, 5, 15, 10});
  }
  // empty dims: a zero-size contraction gives zeros, a zero-size free dim an empty result
  check_values(einsum("ij,jk->ik", {Tensor<T>::empty(Dims{2, 0}), Tensor<T>::empty(Dims{0, 3})}), {0, 0, 0, 0, 0, 0});
  CHECK(einsum("ij,jk->ik", {Tensor<T>::empty(Dims{0, 2}), make<T>({1, 2, 3, 4}, Dims{2, 2})}).sizes() == Dims{0, 2});
}

TEST_CASE("einsum: ellipsis, broadcasting, diagonals, attention, non-contiguous operands", "[ops][linalg][einsum]") {
  // x = (torch.arange(36.) % 4 - 1.5).reshape(2,3,2,3); y = (torch.arange(36.) % 5 - 2).reshape(2,3,3,2)
  // torch.einsum('...ij,...jk', x, y)
  const Tensor<float> x = make<float>(iota_mod(36, 4, 1.5), Dims{2, 3, 2, 3}), y = make<float>(iota_mod(36, 5, 2), Dims{2, 3, 3, 2});
  const Tensor<float> r = einsum("...ij,...jk", {x, y});
  CHECK(r.sizes() == Dims{2, 3, 2, 2});
  check_values(r, {4, 0, -4, -2, 4, 4.5, -2, -0.5, -1.5, -0.5, -2.5, 4.5, -2.5, -2, -1.5, 0, -2, 4, 4, -4, -4, 4, 4, -2}, 1e-6, 1e-6);
  // q = (torch.arange(48.) % 7 - 3).reshape(2,2,3,4)/2; k = (torch.arange(80.) % 6 - 2).reshape(2,2,5,4)/2
  // torch.einsum('bhqd,bhkd->bhqk', q, k)
  const Tensor<float> q = make<float>(iota_mod(48, 7, 3, 0.5), Dims{2, 2, 3, 4}), k = make<float>(iota_mod(80, 6, 2, 0.5), Dims{2, 2, 5, 4});
  check_values(einsum("bhqd,bhkd->bhqk", {q, k}),
               {2.0,  -2.5, -1.0, 2.0,  -2.5, -1.75, 1.25,  -0.25, -1.75, 1.25,  1.5,   -2.0,  0.5,  1.5,  -2.0,
                -2.25, -2.25, 5.25, -2.25, -2.25, 2.0,  1.0,   -1.5, 2.0,   1.0,   -2.5, -1.0,  0.5,   -2.5, -1.0,
                -1.0, 3.5,  0.5,  -1.0, 3.5,  -2.5, -1.0, 2.0,  -2.5, -1.0, 1.25, -0.25, -1.75, 1.25, -0.25,
                1.5,  -2.0, 0.5,  1.5,  -2.0, -2.25, 5.25, -2.25, -2.25, 5.25, 1.0,  -1.5, 2.0,  1.0,  -1.5},
               1e-6, 1e-6);
  // size-1 broadcasting: torch.einsum('ij,kj->ik', [[2.],[3.]], [[1.,2,3],[4,5,6]]) -> [[12, 30], [18, 45]]
  check_values(einsum("ij,kj->ik", {make<float>({2, 3}, Dims{2, 1}), make<float>({1, 2, 3, 4, 5, 6}, Dims{2, 3})}), {12, 30, 18, 45});
  // torch.einsum('...i,...i', torch.ones(2,1,3), torch.ones(4,3)).shape == [2, 4]
  const Tensor<float> dots = einsum("...i,...i", {ones<float>(Dims{2, 1, 3}), ones<float>(Dims{4, 3})});
  CHECK(dots.sizes() == Dims{2, 4});
  check_values(dots, std::vector<double>(8, 3.0));
  // torch.einsum('i...,...j->...ij', ones(2,3), ones(3,4)).shape == [3, 2, 4]; '...ij->ij' sums the ellipsis
  CHECK(einsum("i...,...j->...ij", {ones<float>(Dims{2, 3}), ones<float>(Dims{3, 4})}).sizes() == Dims{3, 2, 4});
  check_values(einsum("...ij->ij", {ones<float>(Dims{2, 3, 4})}), std::vector<double>(12, 2.0));
  // torch.einsum('bii->bi', a[:, :, :3]) with a = (torch.arange(24.) % 7 - 3).reshape(2,3,4): a non-contiguous slice
  const Tensor<float> a = make<float>(iota_mod(24, 7, 3), Dims{2, 3, 4});
  check_values(einsum("bii->bi", {Tensor<float>(a.slice(2, 0, 3))}), {-3, 2, 0, 2, 0, -2});
  // torch.einsum('iij->j', torch.arange(18.).reshape(3,3,2)) -> [24, 27]; uppercase labels; spaces
  check_values(einsum("iij->j", {make<float>(iota_mod(18, 18, 0), Dims{3, 3, 2})}), {24, 27});
  check_values(einsum("bA, Ab", {ones<float>(Dims{2, 3}), ones<float>(Dims{3, 2})}), {6});
  // a transposed operand: einsum('ij,jk->ik', A.t(), B) == A.t() @ B
  const Tensor<double> A = make<double>({1, 2, 3, 4, -1, 0}, Dims{3, 2}), B = make<double>({1, -1, 0, 1, 2, 1}, Dims{3, 2});
  check_values(einsum("ij,jk->ik", {Tensor<double>(A.t()), B}), {-1, 1, 2, 2});
}

TEST_CASE("einsum: run-time typed, by schema, errors", "[ops][linalg][einsum]") {
  const AnyTensor u(make<int64_t>({1, -2, 3}, Dims{3})), v(make<int64_t>({2, 1}, Dims{2}));
  const AnyTensor r = einsum("i,j->ij", std::vector<AnyTensor>{u, v});
  CHECK(r.dtype() == ScalarType::Int64);
  check_values(r.get<int64_t>(), {2, 1, -4, -2, 6, 3});
  const AnyTensor s = by_name("aten::einsum", {std::string("i,i"), std::vector<AnyTensor>{u, u}, ops::Arg()});
  check_values(s.get<int64_t>(), {14});
  const Tensor<float> m = ones<float>(Dims{2, 3});
  auto msg = [&](std::string_view eq, std::vector<Tensor<float>> ops) {
    return message_of<ValueError>([&] { (void)einsum(eq, ops); });
  };
  // torch: "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"
  CHECK(msg("ij,jk", {m, ones<float>(Dims{4, 2})}).find("does not broadcast") != std::string::npos);
  CHECK(msg("ij,jk", {m, ones<float>(Dims{4, 2})}).find("[2, 3] float32, [4, 2] float32") != std::string::npos);
  CHECK(msg("ii->i", {m}).find("repeated for operand 0") != std::string::npos);
  CHECK(msg("ij->k", {m}).find("does not appear") != std::string::npos);
  CHECK(msg("ij->ii", {m}).find("more than once") != std::string::npos);
  CHECK(msg("ij,jk->ik", {m}).find("fewer operands") != std::string::npos);
  CHECK(msg("ij", {m, m}).find("more operands") != std::string::npos);
  CHECK(msg("i1", {m}).find("invalid subscript") != std::string::npos);
  CHECK(msg("ijk", {m}).find("number of subscripts") != std::string::npos);
  CHECK(msg("i..j", {m}).find("ellipsis") != std::string::npos);
  CHECK(msg(std::string(200, 'i'), {m}).find("at most 127") != std::string::npos);
  CHECK_THROWS_AS(einsum("ij,jk", std::vector<AnyTensor>{AnyTensor(m), AnyTensor(ones<double>(Dims{3, 2}))}), TypeError);
  CHECK_THROWS_AS(einsum("ij", std::vector<Tensor<bool>>{Tensor<bool>::empty(Dims{1, 1})}), TypeError);
}

// NLLB-MoE's router: h = torch.tensor([[1., -2], [3, 0.5], [-1, 4]]),
// mask = torch.tensor([[True, False], [False, True], [True, True]]):
// torch.einsum('bm,be->ebm', h, mask) is float32 (no summed label: a broadcast multiply, promoted);
// torch.einsum('bm,be->em', h, mask) raises "expected scalar type Float but found Bool"
TEST_CASE("einsum: mixed dtypes promote without a summed label, as torch's cpu", "[ops][linalg][einsum]") {
  const AnyTensor h(make<float>({1, -2, 3, 0.5, -1, 4}, Dims{3, 2}));
  const AnyTensor mask(make<bool>({true, false, false, true, true, true}, Dims{3, 2}));
  for (const bool mask_first : {false, true}) {
    const AnyTensor r = mask_first ? einsum("be,bm->ebm", std::vector<AnyTensor>{mask, h})
                                   : einsum("bm,be->ebm", std::vector<AnyTensor>{h, mask});
    REQUIRE(r.dtype() == ScalarType::Float);
    CHECK(r.sizes() == Dims{2, 3, 2});
    check_values(r.get<float>(), {1, -2, 0, 0, -1, 4, 0, 0, 3, 0.5, -1, 4});
  }
  const std::string msg = message_of<TypeError>([&] { (void)einsum("bm,be->em", std::vector<AnyTensor>{h, mask}); });
  CHECK(msg.find("aten::einsum") != std::string::npos);
  CHECK(msg.find("[3, 2] float32, [3, 2] bool") != std::string::npos);
  // int64 times float32 without a summed label: float32, as torch.result_type
  const AnyTensor ids(make<int64_t>({2, 3}, Dims{2}));
  const AnyTensor o = einsum("i,j->ij", std::vector<AnyTensor>{ids, AnyTensor(make<float>({0.5, -1}, Dims{2}))});
  REQUIRE(o.dtype() == ScalarType::Float);
  check_values(o.get<float>(), {1, -2, 1.5, -3});
}

// x = torch.tensor([[3., -4, 0], [1, 2, -2]])
// for p in [2, 1, 0, inf, -inf, 3, 0.5, -1]: torch.linalg.vector_norm(x, p),
//   torch.linalg.vector_norm(x, p, dim=1), torch.linalg.vector_norm(x, p, dim=0, keepdim=True)
TEMPLATE_TEST_CASE("vector norms: every floating dtype, every kind of p", "[ops][linalg][norm]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = std::max(tol<T>(), 2e-7);
  const Tensor<T> x = make<T>({3, -4, 0, 1, 2, -2}, Dims{2, 3});
  struct Row {
    double p;
    std::vector<double> all, rows, cols;
  };
  const std::vector<Row> rows = {
      {2, {5.830951690673828}, {5.0, 3.0}, {3.1622776985168457, 4.4721360206604, 2.0}},
      {1, {12}, {7, 5}, {4, 6, 2}},
      {0, {5}, {2, 3}, {2, 2, 1}},
      {inf, {4}, {4, 2}, {3, 4, 2}},
      {-inf, {0}, {0, 1}, {1, 2, 0}},
      {3, {4.762203216552734}, {4.497941493988037, 2.571281671524048}, {3.0365891456604004, 4.160167694091797, 2.0}},
      {0.5, {57.160831451416016}, {13.928203582763672, 14.656855583190918}, {7.464102268218994, 11.656854629516602, 2.0}},
      {-1, {0}, {0, 0.5}, {0.75, 1.3333333730697632, 0}},
  };
  for (const Row& r : rows) {
    INFO("p = " << r.p);
    const double rt = std::is_same_v<T, float> ? 1e-6 : e;  // torch's float32 values
    const Tensor<T> all = vector_norm(x, r.p);
    CHECK(all.sizes() == Dims{});
    check_values(all, r.all, rt, rt);
    check_values(vector_norm(x, r.p, Dims{1}), r.rows, rt, rt);
    const Tensor<T> c = vector_norm(x, r.p, Dims{0}, true);
    CHECK(c.sizes() == Dims{1, 3});
    check_values(c, r.cols, rt, rt);
    // aten::norm.ScalarOpt_dim / aten::norm.Scalar by schema
    check_values(by_name("aten::norm", {AnyTensor(x), r.p, std::vector<int64_t>{1}, false}).template get<T>(), r.rows, rt, rt);
    check_values(by_name("aten::norm", {AnyTensor(x), r.p}).template get<T>(), r.all, rt, rt);
  }
  // torch.norm(x) and torch.norm(x, 'fro', dim=1) trace to aten::frobenius_norm.dim
  check_values(by_name("aten::frobenius_norm", {AnyTensor(x), std::vector<int64_t>{0, 1}, false}).template get<T>(), {5.830951690673828}, e, e);
  check_values(by_name("aten::frobenius_norm", {AnyTensor(x), std::vector<int64_t>{1}, true}).template get<T>(), {5, 3}, e, e);
  // norm.ScalarOpt_dim with p None is 2
  check_values(by_name("aten::norm", {AnyTensor(x), ops::Arg(), std::vector<int64_t>{-1}, false}).template get<T>(), {5, 3}, e, e);
}

TEST_CASE("vector norms: NaN, empty, 0-dim, dtype, non-contiguous, errors", "[ops][linalg][norm]") {
  // torch.linalg.vector_norm(torch.tensor([3., kNan, 4.]), p): inf -> kNan, -inf -> kNan, 0 -> 3, 2 -> kNan
  const Tensor<float> n = make<float>({3, kNan, 4}, Dims{3});
  check_values(vector_norm(n, inf), {kNan});
  check_values(vector_norm(n, -inf), {kNan});
  check_values(vector_norm(n, 0), {3});
  check_values(vector_norm(n, 2), {kNan});
  // torch.linalg.vector_norm(torch.zeros(0, 3), 0) -> 0; dim=1 with inf -> tensor([]); 0-dim input
  check_values(vector_norm(Tensor<float>::empty(Dims{0, 3}), 0), {0});
  check_values(vector_norm(Tensor<float>::empty(Dims{0, 3}), 2, Dims{0}), {0, 0, 0});
  CHECK(vector_norm(Tensor<float>::empty(Dims{0, 3}), inf, Dims{1}).sizes() == Dims{0});
  check_values(vector_norm(make<float>({-3}, Dims{}), 2), {3});
  check_values(vector_norm(make<float>({-3}, Dims{}), 2, Dims{0}), {3});
  // a transposed input: the norms of the columns of x are the rows of x.t()
  const Tensor<double> x = make<double>({3, -4, 0, 1, 2, -2}, Dims{2, 3});
  check_values(vector_norm(Tensor<double>(x.t()), 1, Dims{1}), {4, 6, 2});
  // dtype: torch.linalg.vector_norm(x.half(), 2, dtype=torch.float32) is float32
  const AnyTensor h = vector_norm(AnyTensor(Tensor<half>(x.to<half>())), 2, std::nullopt, false, ScalarType::Float);
  CHECK(h.dtype() == ScalarType::Float);
  check_values(h.get<float>(), {5.830951690673828}, 1e-6, 1e-6);
  const AnyTensor d = by_name("aten::linalg_vector_norm", {AnyTensor(x), int64_t(1), ops::Arg(), false, int64_t(6)});
  CHECK(d.dtype() == ScalarType::Float);
  check_values(d.get<float>(), {12});
  // errors: torch "cannot compute the inf norm on an empty tensor", "Expected a floating point ...",
  // "dtype should be floating point", "Dimension out of range", "dim 0 appears multiple times"
  const std::string m = message_of<ValueError>([] { (void)vector_norm(Tensor<float>::empty(Dims{0, 3}), inf); });
  CHECK(m.find("aten::linalg_vector_norm") != std::string::npos);
  CHECK(m.find("[0, 3] float32") != std::string::npos);
  CHECK_THROWS_AS(vector_norm(Tensor<float>::empty(Dims{0, 3}), -1, Dims{0}), ValueError);
  CHECK_THROWS_AS(vector_norm(AnyTensor(make<int64_t>({1, 2}, Dims{2}))), TypeError);
  CHECK_THROWS_AS(vector_norm(AnyTensor(x), 2, std::nullopt, false, ScalarType::Int64), TypeError);
  CHECK_THROWS_AS(vector_norm(x, 2, Dims{2}), IndexError);
  CHECK_THROWS_AS(vector_norm(x, 2, Dims{0, 0}), ValueError);
  CHECK_THROWS_AS(by_name("aten::norm", {AnyTensor(make<int64_t>({1, 2}, Dims{2})), 2.0, std::vector<int64_t>{0}, false}), TypeError);
}

// s = [[1., 2], [3, 4]]; m1 = [[1., 2, 3], [4, 5, 6]]; m2 = [[1., 0], [-1, 2], [0.5, 1]]
// torch.addmm(s, m1, m2), torch.addmm(torch.tensor([1., -1]), m1, m2, beta=0.5, alpha=2),
// torch.addmm(s, m1, m2, beta=0, alpha=-1)
TEMPLATE_TEST_CASE("addmm, baddbmm: floating dtypes", "[ops][linalg][addmm]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = tol<T>();
  const Tensor<T> s = make<T>({1, 2, 3, 4}, Dims{2, 2}), m1 = make<T>({1, 2, 3, 4, 5, 6}, Dims{2, 3}),
                  m2 = make<T>({1, 0, -1, 2, 0.5, 1}, Dims{3, 2});
  // example-begin addmm
  const Tensor<T> r = addmm(s, m1, m2);
  // example-end addmm
  check_values(r, {1.5, 9, 5, 20}, e, e);
  check_values(addmm(make<T>({1, -1}, Dims{2}), m1, m2, 0.5, 2), {1.5, 13.5, 4.5, 31.5}, e, e);
  check_values(addmm(s, m1, m2, 0, -1), {-0.5, -7, -2, -16}, e, e);
  // alpha and beta that 16-bit floats cannot hold: the epilogue in float32 (float64 reference)
  check_values(addmm(s, m1, m2, 0.1, 0.3), {0.1 + 0.3 * 0.5, 0.2 + 0.3 * 7, 0.3 + 0.3 * 2, 0.4 + 0.3 * 16}, e, e);
  // beta = 0 ignores NaN in self (torch: "nan and inf in it will not be propagated")
  check_values(addmm(make<T>({kNan, kNan, kNan, kNan}, Dims{2, 2}), m1, m2, 0, 1), {0.5, 7, 2, 16}, e, e);
  // transposed operands: addmm(s, m2.t(), m1.t()) == (m1 @ m2).t() + s
  check_values(addmm(s, Tensor<T>(m2.t()), Tensor<T>(m1.t())), {1.5, 4, 10, 20}, e, e);
  // bs = [1., 2]; b1 = torch.arange(12.).reshape(2,2,3) - 5; b2 = torch.arange(12.).reshape(2,3,2) % 4 - 1
  // torch.baddbmm(bs, b1, b2), torch.baddbmm(bs, b1, b2, beta=2, alpha=0.5)
  const Tensor<T> bs = make<T>({1, 2}, Dims{2}), b1 = make<T>(iota_mod(12, 12, 5), Dims{2, 2, 3}),
                  b2 = make<T>(iota_mod(12, 4, 1), Dims{2, 3, 2});
  check_values(baddbmm(bs, b1, b2), {5, -6, 2, 0, 3, 10, 6, 22}, e, e);
  check_values(baddbmm(bs, b1, b2, 2, 0.5), {4, 0, 2.5, 3, 3, 8, 4.5, 14}, e, e);
  // empty
  CHECK(addmm(Tensor<T>::empty(Dims{0, 2}), Tensor<T>::empty(Dims{0, 3}), m2).sizes() == Dims{0, 2});
  check_values(addmm(s, Tensor<T>::empty(Dims{2, 0}), Tensor<T>::empty(Dims{0, 2})), {1, 2, 3, 4});
}

// torch.addmm(torch.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2, 3], [4, 5, 6]]),
//             torch.tensor([[1, 0], [-1, 2], [3, 1]]), beta=2, alpha=3) -> [[26, 25], [57, 56]]
TEMPLATE_TEST_CASE("addmm, baddbmm: integer dtypes", "[ops][linalg][addmm]", int32_t, int64_t) {
  using T = TestType;
  const Tensor<T> s = make<T>({1, 2, 3, 4}, Dims{2, 2}), m1 = make<T>({1, 2, 3, 4, 5, 6}, Dims{2, 3}),
                  m2 = make<T>({1, 0, -1, 2, 3, 1}, Dims{3, 2});
  check_values(addmm(s, m1, m2, 2, 3), {26, 25, 57, 56});
  // beta=0.5 truncates to 0 for integers (torch.addmm(..., beta=0.5) on int32 gives the product)
  check_values(addmm(s, m1, m2, 0.5, 1), {8, 7, 17, 16});
  check_values(baddbmm(Tensor<T>(s.unsqueeze(0)), Tensor<T>(m1.unsqueeze(0)), Tensor<T>(m2.unsqueeze(0))), {9, 9, 20, 20});
}

TEST_CASE("addmm, baddbmm: uint8, run-time typed, by schema, errors", "[ops][linalg][addmm]") {
  // torch.addmm(torch.tensor([[1, 2]], dtype=torch.uint8), [[1, 2], [3, 4]], [[5, 6], [7, 8]]) -> [[20, 24], [44, 52]]
  const Tensor<uint8_t> u = addmm(make<uint8_t>({1, 2}, Dims{1, 2}), make<uint8_t>({1, 2, 3, 4}, Dims{2, 2}),
                                  make<uint8_t>({5, 6, 7, 8}, Dims{2, 2}));
  check_values(u, {20, 24, 44, 52});
  const AnyTensor s(make<float>({1, 2, 3, 4}, Dims{2, 2})), m1(make<float>({1, 2, 3, 4, 5, 6}, Dims{2, 3})),
      m2(make<float>({1, 0, -1, 2, 0.5, 1}, Dims{3, 2}));
  check_values(addmm(s, m1, m2).get<float>(), {1.5, 9, 5, 20});
  check_values(by_name("aten::addmm", {s, m1, m2, 0.5, int64_t(2)}).get<float>(), {1.5, 15, 5.5, 34});
  const AnyTensor b = by_name("aten::baddbmm", {AnyTensor(make<double>({1}, Dims{1})), AnyTensor(ones<double>(Dims{2, 2, 3})),
                                                AnyTensor(ones<double>(Dims{2, 3, 1}))});
  CHECK(b.sizes() == Dims{2, 2, 1});
  check_values(b.get<double>(), {4, 4, 4, 4});
  // errors (torch: "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)", "mat1 must be a matrix",
  // "The expanded size of the tensor (2) must match ...", "mat1 and mat2 must have the same dtype")
  const std::string m = message_of<ShapeError>([&] { (void)addmm(s, m1, AnyTensor(ones<float>(Dims{4, 2}))); });
  CHECK(m.find("aten::addmm") != std::string::npos);
  CHECK(m.find("[2, 3] float32, [4, 2] float32") != std::string::npos);
  CHECK_THROWS_AS(addmm(s, AnyTensor(ones<float>(Dims{2, 3, 1})), m2), ShapeError);
  CHECK_THROWS_AS(addmm(AnyTensor(ones<float>(Dims{3, 3})), m1, m2), ShapeError);
  CHECK_THROWS_AS(addmm(s, m1, AnyTensor(ones<double>(Dims{3, 2}))), TypeError);
  CHECK_THROWS_AS(addmm(AnyTensor(ones<bool>(Dims{2, 2})), AnyTensor(ones<bool>(Dims{2, 3})), AnyTensor(ones<bool>(Dims{3, 2}))), TypeError);
  CHECK_THROWS_AS(baddbmm(s, m1, m2), ShapeError);
  CHECK_THROWS_AS(baddbmm(AnyTensor(ones<float>(Dims{2, 2, 2})), AnyTensor(ones<float>(Dims{2, 2, 3})), AnyTensor(ones<float>(Dims{3, 3, 2}))), ShapeError);
}

// torch.outer(torch.tensor([1, -2, 3]), torch.tensor([2, 1, 4, 0])) (and bool: logical and)
TEMPLATE_TEST_CASE("outer: every dtype", "[ops][linalg][outer]", bool, uint8_t, int32_t, int64_t, half, bfloat16, float, double) {
  using T = TestType;
  if constexpr (std::is_same_v<T, bool>) {
    check_values(outer(Tensor<bool>{true, false}, Tensor<bool>{true, true, false}), {1, 1, 0, 0, 0, 0});
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    check_values(outer(make<T>({1, 2, 3}, Dims{3}), make<T>({2, 1, 100, 0}, Dims{4})), {2, 1, 100, 0, 4, 2, 200, 0, 6, 3, 44, 0});
  } else {
    const Tensor<T> r = outer(make<T>({1, -2, 3}, Dims{3}), make<T>({2, 1, 4, 0}, Dims{4}));
    CHECK(r.sizes() == Dims{3, 4});
    check_values(r, {2, 1, 4, 0, -4, -2, -8, 0, 6, 3, 12, 0});
  }
  CHECK(outer(Tensor<T>::empty(Dims{0}), Tensor<T>::empty(Dims{2})).sizes() == Dims{0, 2});
}

TEST_CASE("outer: promotion, ger, non-contiguous, errors", "[ops][linalg][outer]") {
  // torch.outer(torch.ones(2).int(), torch.ones(3)).dtype == float32
  const AnyTensor r = outer(AnyTensor(make<int32_t>({1, 2}, Dims{2})), AnyTensor(make<float>({0.5, 1, 2}, Dims{3})));
  CHECK(r.dtype() == ScalarType::Float);
  check_values(r.get<float>(), {0.5, 1, 2, 1, 2, 4});
  check_values(by_name("aten::ger", {AnyTensor(make<double>({1, 2}, Dims{2})), AnyTensor(make<double>({3}, Dims{1}))}).get<double>(), {3, 6});
  const Tensor<float> m = make<float>({1, 2, 3, 4}, Dims{2, 2});
  check_values(outer(Tensor<float>(m.select(1, 1)), Tensor<float>(m.select(0, 1))), {6, 8, 12, 16});
  // torch: "outer: Expected 1-D argument self, but got 2-D"
  const std::string msg = message_of<ShapeError>([&] { (void)outer(m, Tensor<float>::empty(Dims{3})); });
  CHECK(msg.find("aten::outer") != std::string::npos);
  CHECK(msg.find("[2, 2] float32") != std::string::npos);
}

// st = [1., 2, -3, 4]; en = [3., -2, 5, 4.5]: torch.lerp(st, en, 0.25), torch.lerp(st, en, 0.75),
// torch.lerp(st, en, torch.tensor([0., 0.4, 0.6, 1.5])), torch.lerp(st, en, -0.5); and in bfloat16
TEMPLATE_TEST_CASE("lerp: floating dtypes", "[ops][linalg][lerp]", half, bfloat16, float, double) {
  using T = TestType;
  const double e = std::is_same_v<T, double> ? 1e-7 : tol<T>();  // the literals are torch's float32 values
  const Tensor<T> st = make<T>({1, 2, -3, 4}, Dims{4}), en = make<T>({3, -2, 5, 4.5}, Dims{4});
  check_values(lerp(st, en, 0.25), {1.5, 1.0, -1.0, 4.125}, e, e);
  check_values(lerp(st, en, 0.75), {2.5, -1.0, 3.0, 4.375}, e, e);
  check_values(lerp(st, en, -0.5), {0, 4, -7, 3.75}, e, e);
  if constexpr (std::is_same_v<T, bfloat16>) {
    check_values(lerp(st, en, make<T>({0, 0.4, 0.6, 1.5}, Dims{4})), {1.0, 0.3984375, 1.8125, 4.75});
  } else {
    check_values(lerp(st, en, make<T>({0, 0.4, 0.6, 1.5}, Dims{4})), {1.0, 0.3999999761581421, 1.8000001907348633, 4.75}, e, e);
  }
  // broadcasting: torch.lerp([[1.], [2.]], [10., 20, 30], torch.tensor(0.5))
  check_values(lerp(make<T>({1, 2}, Dims{2, 1}), make<T>({10, 20, 30}, Dims{3}), 0.5), {5.5, 10.5, 15.5, 6, 11, 16}, e, e);
}

TEST_CASE("lerp: by schema (Scalar and Tensor overloads), errors", "[ops][linalg][lerp]") {
  const AnyTensor st(make<float>({1, 2, -3, 4}, Dims{4})), en(make<float>({3, -2, 5, 4.5}, Dims{4}));
  check_values(by_name("aten::lerp", {st, en, 0.25}).get<float>(), {1.5, 1.0, -1.0, 4.125});
  check_values(by_name("aten::lerp", {st, en, AnyTensor(make<float>({0, 0.4, 0.6, 1.5}, Dims{4}))}).get<float>(),
               {1.0, 0.3999999761581421, 1.8000001907348633, 4.75});
  // torch: "expected dtype float for `end` but got dtype double"; int inputs; shapes that do not broadcast
  CHECK_THROWS_AS(lerp(st, AnyTensor(make<double>({1, 2, 3, 4}, Dims{4})), AnyTensor(full<float>(Dims{}, 0.5f))), TypeError);
  CHECK_THROWS_AS(lerp(AnyTensor(make<int64_t>({1}, Dims{1})), AnyTensor(make<int64_t>({1}, Dims{1})), AnyTensor(make<int64_t>({0}, Dims{}))), TypeError);
  const std::string m = message_of<ShapeError>([&] { (void)lerp(make<float>({1, 2, 3}, Dims{3}), make<float>({1, 2}, Dims{2}), 0.5); });
  CHECK(m.find("aten::lerp") != std::string::npos);
}

// torch.nan_to_num(torch.tensor([kNan, inf, -inf, 1.5])) per dtype: 0, max, lowest, 1.5;
// torch.nan_to_num(..., 1.0, 1e39, -1e39) -> [1, inf, -inf, 1.5] (float32: 1e39 overflows)
TEMPLATE_TEST_CASE("nan_to_num: floating dtypes", "[ops][linalg][nan_to_num]", half, bfloat16, float, double) {
  using T = TestType;
  const Tensor<T> x = make<T>({kNan, inf, -inf, 1.5}, Dims{2, 2});
  const double big = std::is_same_v<T, half> ? 65504.0 : std::is_same_v<T, bfloat16> ? 3.3895313892515355e38
                     : std::is_same_v<T, float> ? 3.4028234663852886e38 : std::numeric_limits<double>::max();
  const Tensor<T> r = nan_to_num(x);
  CHECK(r.sizes() == Dims{2, 2});
  check_values(r, {0, big, -big, 1.5});
  check_values(nan_to_num(x, 2.0, 100.0, -7.0), {2, 100, -7, 1.5});
  if constexpr (!std::is_same_v<T, double>) check_values(nan_to_num(x, 1.0, 1e39, -1e39), {1, inf, -inf, 1.5});
  check_values(nan_to_num(Tensor<T>(x.t()), 3.0), {3, -big, big, 1.5});
}

TEST_CASE("nan_to_num: integers and bool unchanged, by schema", "[ops][linalg][nan_to_num]") {
  check_values(nan_to_num(make<int32_t>({1, -2, 3}, Dims{3}), 5.0), {1, -2, 3});
  check_values(nan_to_num(Tensor<bool>{true, false}), {1, 0});
  check_values(nan_to_num(make<uint8_t>({255, 0}, Dims{2})), {255, 0});
  const AnyTensor r = by_name("aten::nan_to_num", {AnyTensor(make<float>({kNan, -inf}, Dims{2})), 0.5, ops::Arg(), -1.0});
  check_values(r.get<float>(), {0.5, -1});
  CHECK(nan_to_num(Tensor<float>::empty(Dims{0, 3})).sizes() == Dims{0, 3});
}
