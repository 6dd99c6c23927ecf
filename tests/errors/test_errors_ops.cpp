// tests/errors/test_errors_ops.cpp — bad inputs to elementwise ops, assignment, matmul,
// reductions, softmax and casts (docs/errors.md, sections "Elementwise", "Matmul",
// "Reductions", "Casts", "AnyTensor"). Expected values of the defined-but-special cases (sum of
// an empty tensor, NaN -> int) come from torch 1.13 on x86.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include <cmath>    // NAN, INFINITY, std::isnan
#include <cstdint>  // int32_t, int64_t, uint8_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/core/any_tensor.hpp>  // AnyTensor
#include <torchtpu/torchtpu.hpp>         // the library

#include "error_matchers.hpp"  // terr::has_message

using namespace torchtpu;
using terr::has_message;

namespace {
std::vector<float> values(const Tensor<float>& t) {
  const Tensor<float> c = t.contiguous();
  return std::vector<float>(c.data_ptr(), c.data_ptr() + c.numel());
}
}  // namespace

TEST_CASE("errors/elementwise: shapes that do not broadcast name the op and both shapes", "[errors]") {
  Tensor<float> a = zeros<float>({2, 3});
  Tensor<float> b = zeros<float>({4});
  REQUIRE_THROWS_MATCHES(a + b, ShapeError, has_message({"add", "[2, 3]", "[4]", "size 3 vs 4 at dim 1"}));
  REQUIRE_THROWS_MATCHES(a * b, ShapeError, has_message({"mul", "[2, 3]", "[4]"}));
  REQUIRE_THROWS_MATCHES(maximum(a, zeros<float>({3, 3})), ShapeError, has_message({"maximum", "[2, 3]", "[3, 3]"}));
  REQUIRE_THROWS_MATCHES(where(a > 0, a, b), ShapeError, has_message({"where", "[4]"}));
  REQUIRE_THROWS_MATCHES(exp(a) - b, ShapeError, has_message({"sub", "[2, 3]", "[4]"}));
  // The check is at construction: a lazy expression never holds mismatched shapes.
  CHECK((a + zeros<float>({3})).shape() == Dims{2, 3});
}

TEST_CASE("errors/elementwise: mixed dtypes promote as torch (no error), bad options throw", "[errors]") {
  Tensor<int32_t> i = {1, 2, 3};
  Tensor<float> f = {0.5f, 0.5f, 0.5f};
  Tensor<double> d = i + f;  // int32 + float32 -> float32, as torch
  CHECK(std::vector<double>(d.data_ptr(), d.data_ptr() + 3) == std::vector<double>{1.5, 2.5, 3.5});
  Tensor<int64_t> j = {7};
  Tensor<float> q = j / 2;  // true division of integers gives a float, as torch
  CHECK(q.item() == 3.5f);
  REQUIRE_THROWS_MATCHES(gelu(f, "tanhh"), ValueError, has_message({"gelu", "\"none\" or \"tanh\"", "tanhh"}));
}

TEST_CASE("errors/pow: an integer tensor to a negative integer number is refused, as torch", "[errors]") {
  Tensor<int64_t> i = {2, 3};
  REQUIRE_THROWS_MATCHES(pow(i, -2), ValueError,
                         has_message({"pow: integers to negative integer powers are not allowed", "int64", "-2"}));
  REQUIRE_THROWS_MATCHES(pow(Tensor<int32_t>{1}, int64_t(-1)), ValueError, has_message({"int32", "-1"}));
  // torch 1.13: a tensor exponent gives 0 for |base| > 1 (no error); a float base is fine.
  Tensor<int64_t> t = pow(i, Tensor<int64_t>{-1, 2});
  CHECK(std::vector<int64_t>(t.data_ptr(), t.data_ptr() + 2) == std::vector<int64_t>{0, 9});
  Tensor<float> f = pow(Tensor<float>{2, 4}, -2);
  CHECK(std::vector<float>(f.data_ptr(), f.data_ptr() + 2) == std::vector<float>{0.25f, 0.0625f});
}

TEST_CASE("errors/assign: a destination of another shape is refused and left unchanged", "[errors]") {
  Tensor<float> dst = {{1, 2, 3}, {4, 5, 6}};
  Tensor<float> src = {1, 2};
  REQUIRE_THROWS_MATCHES(dst.copy_(src), ShapeError, has_message({"assign", "[2]", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(dst += src, ShapeError, has_message({"[2, 3]", "[2]"}));
  REQUIRE_THROWS_MATCHES(dst.slice(0, 0, 1) = zeros<float>({2, 3}), ShapeError, has_message({"assign", "[2, 3]", "[1, 3]"}));
  CHECK(values(dst) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("errors/overlap: in-place writes into a view whose elements share memory are refused", "[errors]") {
  const std::string shared = "refers to a single memory location; write into a copy (clone() or contiguous()) instead";
  Tensor<float> base = {2.0f};
  Tensor<float> v = base.broadcast_to({1, 3});  // strides [0, 0]: three elements, one location
  REQUIRE_THROWS_MATCHES(v *= 2, ValueError,
                         has_message({"mul_: unsupported operation: more than one element of the written-to tensor "
                                      "(shape [1, 3], strides [0, 0])", shared}));
  CHECK(base.at(0) == 2.0f);  // nothing written (a write would have made it 4 or more)
  Tensor<float> half = {0.5f};
  Tensor<float> w = half.broadcast_to({4});
  const Tensor<float> r4 = {1, 2, 3, 4};
  REQUIRE_THROWS_MATCHES(w += r4, ValueError, has_message({"add_: unsupported operation", "(shape [4], strides [0])", shared}));
  REQUIRE_THROWS_MATCHES(w.copy_(r4), ValueError, has_message({"copy_: unsupported operation", "strides [0]"}));
  REQUIRE_THROWS_MATCHES(w.fill_(7), ValueError, has_message({"fill_: unsupported operation", "strides [0]"}));
  REQUIRE_THROWS_MATCHES(half.expand({4}) = r4, ValueError, has_message({"copy_", "strides [0]"}));  // a view temporary
  CHECK(half.at(0) == 0.5f);  // not 4.5 (0.5 + 4, the last write)
  CHECK(values(r4) == std::vector<float>{1, 2, 3, 4});
  // Reading the view, or writing into a copy of it, is fine.
  Tensor<float> c = w.clone();
  c += r4;
  CHECK(values(c) == std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f});
}

TEST_CASE("errors/intdiv: integer division by zero throws; MIN // -1 wraps, as NumPy", "[errors]") {
  // Hand-worked (Python): -7 // 2 = -4, -7 % 2 = 1; 7 // -2 = -4, 7 % -2 = -1; MIN // -1 = -MIN,
  // which wraps to MIN in two's complement; MIN % -1 = 0.
  const int32_t lo = std::numeric_limits<int32_t>::min();  // -2147483648
  const Tensor<int32_t> a = {lo, -7, 7}, b = {-1, 2, -2};
  const Tensor<int32_t> q = floor_divide(a, b), r = remainder(a, b);
  CHECK(std::vector<int32_t>(q.data_ptr(), q.data_ptr() + 3) == std::vector<int32_t>{-2147483647 - 1, -4, -4});
  CHECK(std::vector<int32_t>(r.data_ptr(), r.data_ptr() + 3) == std::vector<int32_t>{0, 1, -1});
  const int64_t llo = std::numeric_limits<int64_t>::min();  // -9223372036854775808
  const Tensor<int64_t> la = {llo, -7, 7}, lb = {-1, 2, -2};
  const Tensor<int64_t> lq = floor_divide(la, lb), lr = remainder(la, lb);
  CHECK(std::vector<int64_t>(lq.data_ptr(), lq.data_ptr() + 3) ==
        std::vector<int64_t>{-9223372036854775807LL - 1, -4, -4});
  CHECK(std::vector<int64_t>(lr.data_ptr(), lr.data_ptr() + 3) == std::vector<int64_t>{0, 1, -1});
  CHECK(Tensor<int64_t>(floor_divide(la, int64_t(-1))).at(0) == -9223372036854775807LL - 1);  // a scalar divisor
  CHECK(Tensor<int64_t>(remainder(la, int64_t(-1))).at(0) == 0);

  // Division by zero: ValueError (torch raises ZeroDivisionError); the operands are unchanged.
  const Tensor<int32_t> x = {1, 2, 3}, z = {2, 0, 1};
  REQUIRE_THROWS_MATCHES(Tensor<int32_t>(floor_divide(x, z)), ValueError, has_message({"floor_divide: integer division by zero"}));
  REQUIRE_THROWS_MATCHES(Tensor<int32_t>(remainder(x, z)), ValueError, has_message({"remainder: integer division by zero"}));
  REQUIRE_THROWS_MATCHES(Tensor<int32_t>(floor_divide(x, 0)), ValueError, has_message({"floor_divide: integer division by zero"}));
  CHECK(std::vector<int32_t>(x.data_ptr(), x.data_ptr() + 3) == std::vector<int32_t>{1, 2, 3});
  CHECK(std::vector<int32_t>(z.data_ptr(), z.data_ptr() + 3) == std::vector<int32_t>{2, 0, 1});
  const Tensor<int64_t> lx = {5, 6}, lz = {0, 3};
  REQUIRE_THROWS_MATCHES(Tensor<int64_t>(floor_divide(lx, lz)), ValueError, has_message({"floor_divide: integer division by zero"}));
  REQUIRE_THROWS_MATCHES(Tensor<int64_t>(remainder(lx, lz)), ValueError, has_message({"remainder: integer division by zero"}));
  const Tensor<uint8_t> ux = {7, 200}, uz = {2, 0};
  REQUIRE_THROWS_MATCHES(Tensor<uint8_t>(floor_divide(ux, uz)), ValueError, has_message({"floor_divide: integer division by zero"}));
  REQUIRE_THROWS_MATCHES(Tensor<uint8_t>(remainder(ux, uz)), ValueError, has_message({"remainder: integer division by zero"}));
  CHECK(std::vector<int>(uz.data_ptr(), uz.data_ptr() + 2) == std::vector<int>{2, 0});
  // One zero at the end of a long divisor (past any vector width): found there too.
  Tensor<int32_t> ones = full<int32_t>({67}, 1);
  ones.data_ptr()[66] = 0;
  REQUIRE_THROWS_MATCHES(Tensor<int32_t>(remainder(full<int32_t>({67}, 5), ones)), ValueError,
                         has_message({"remainder: integer division by zero"}));
  // uint8 with nonzero divisors: 7 // 2 = 3, 200 // 3 = 66; 7 % 2 = 1, 200 % 3 = 2.
  const Tensor<uint8_t> uq = floor_divide(ux, Tensor<uint8_t>{2, 3}), ur = remainder(ux, Tensor<uint8_t>{2, 3});
  CHECK(std::vector<int>(uq.data_ptr(), uq.data_ptr() + 2) == std::vector<int>{3, 66});
  CHECK(std::vector<int>(ur.data_ptr(), ur.data_ptr() + 2) == std::vector<int>{1, 2});
}

TEST_CASE("errors/matmul: inner sizes, ranks, bmm and linear", "[errors]") {
  Tensor<float> a = zeros<float>({2, 3});
  REQUIRE_THROWS_MATCHES(matmul(a, zeros<float>({4, 5})), ShapeError,
                         has_message({"matmul: [2, 3] @ [4, 5]: contracted sizes 3 and 4 differ"}));
  REQUIRE_THROWS_MATCHES(matmul(a, zeros<float>({2})), ShapeError, has_message({"matmul", "[2, 3] @ [2]"}));
  REQUIRE_THROWS_MATCHES(matmul(zeros<float>({}), a), ShapeError, has_message({"matmul", "at least 1 dimension", "[] @ [2, 3]"}));
  REQUIRE_THROWS_MATCHES(matmul(zeros<float>({2, 2, 3}), zeros<float>({3, 3, 4})), ShapeError,
                         has_message({"matmul: [2, 2, 3] @ [3, 3, 4]: batch dims", "[2] and [3]"}));
  REQUIRE_THROWS_MATCHES(bmm(zeros<float>({2, 2, 3}), zeros<float>({3, 3, 4})), ShapeError,
                         has_message({"bmm", "equal batch sizes", "[2, 2, 3]", "[3, 3, 4]"}));
  REQUIRE_THROWS_MATCHES(bmm(a, a), ShapeError, has_message({"bmm", "3-D", "[2, 3]"}));
  REQUIRE_THROWS_MATCHES(linear(a, zeros<float>({3})), ShapeError, has_message({"linear", "weight must be 2-D", "[3]"}));
  REQUIRE_THROWS_MATCHES(linear(a, zeros<float>({4, 5})), ShapeError, has_message({"matmul", "[2, 3]", "[5, 4]"}));
  REQUIRE_THROWS_MATCHES(linear(a, zeros<float>({4, 3}), zeros<float>({5})), ShapeError,
                         has_message({"add", "[2, 4]", "[5]"}));
  CHECK(Tensor<float>(matmul(zeros<float>({2, 0}), zeros<float>({0, 3}))).sizes() == Dims{2, 3});  // k = 0 is fine
}

TEST_CASE("errors/reductions: bad dims, repeated dims, empty inputs", "[errors]") {
  Tensor<float> t = {{1, 2, 3}, {4, 5, 6}};
  REQUIRE_THROWS_MATCHES(sum(t, {2}), IndexError, has_message({"sum", "dimension 2", "[-2, 1]"}));
  REQUIRE_THROWS_MATCHES(mean(t, {-3}), IndexError, has_message({"mean", "dimension -3"}));
  REQUIRE_THROWS_MATCHES(sum(t, {1, -1}), ShapeError, has_message({"sum", "dim 1 appears multiple times", "[1, -1]"}));
  REQUIRE_THROWS_MATCHES(argmax(t, 2), IndexError, has_message({"argmax", "dimension 2"}));
  Tensor<float> e = zeros<float>({0, 3});
  // Reductions with an identity are defined on empty input (torch: sum 0, prod 1, mean nan).
  CHECK(Tensor<float>(sum(e)).item() == 0.0f);
  CHECK(Tensor<float>(prod(e)).item() == 1.0f);
  CHECK(std::isnan(Tensor<float>(mean(e)).item()));
  CHECK(Tensor<float>(sum(e, {0})).sizes() == Dims{3});
  // max/min/argmax have none: an error, as torch.
  REQUIRE_THROWS_MATCHES(max(e), ShapeError, has_message({"max", "zero-size dimension", "[0, 3]"}));
  REQUIRE_THROWS_MATCHES(min(e, {0}), ShapeError, has_message({"min", "zero-size dimension 0", "[0, 3]"}));
  REQUIRE_THROWS_MATCHES(argmax(e), ShapeError, has_message({"argmax", "non-empty", "[0, 3]"}));
  REQUIRE_THROWS_MATCHES(argmin(e, 0), ShapeError, has_message({"argmin", "zero-size dim 0", "[0, 3]"}));
  CHECK(Tensor<float>(max(e, {1})).sizes() == Dims{0});  // reducing a non-empty dim of an empty tensor is fine
}

TEST_CASE("errors/softmax: dims out of range; empty input is fine", "[errors]") {
  Tensor<float> t = {{1, 2, 3}, {4, 5, 6}};
  REQUIRE_THROWS_MATCHES(softmax(t, 2), IndexError, has_message({"softmax", "dimension 2"}));
  REQUIRE_THROWS_MATCHES(log_softmax(t, -3), IndexError, has_message({"log_softmax", "dimension -3"}));
  CHECK(Tensor<float>(softmax(zeros<float>({0, 3}), 1)).sizes() == Dims{0, 3});
}

TEST_CASE("errors/casts: NaN and inf to integers are defined, as torch on x86", "[errors]") {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor<float> x = {NAN, inf, -inf, 3e9f, -2.7f, 300.0f};
  Tensor<int32_t> i = to<int32_t>(x);
  const int32_t lo = std::numeric_limits<int32_t>::min();
  CHECK(std::vector<int32_t>(i.data_ptr(), i.data_ptr() + 6) == std::vector<int32_t>{lo, lo, lo, lo, -2, 300});
  Tensor<int64_t> l = to<int64_t>(x);
  const int64_t llo = std::numeric_limits<int64_t>::min();
  CHECK(std::vector<int64_t>(l.data_ptr(), l.data_ptr() + 6) == std::vector<int64_t>{llo, llo, llo, 3000000000, -2, 300});
  Tensor<uint8_t> u = to<uint8_t>(x);  // uint8 wraps the int32 result (300 -> 44, -2 -> 254)
  CHECK(std::vector<int>(u.data_ptr(), u.data_ptr() + 6) == std::vector<int>{0, 0, 0, 0, 254, 44});
}

TEST_CASE("errors/anytensor: get<T> of another dtype names both dtypes", "[errors]") {
  AnyTensor a(Tensor<float>{1, 2});
  REQUIRE_THROWS_MATCHES(a.get<int64_t>(), TypeError, has_message({"AnyTensor::get", "int64", "float32"}));
  CHECK(a.get<float>().numel() == 2);
}
