// Laziness and operand capture: nothing computes until materialized; expressions stored in
// `auto` built from temporaries stay valid; every node kind evaluated after its temporaries
// are gone; eval() and item(); static ranks through expressions.
#include "../ops/testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

namespace {
Tensor<float> make(std::initializer_list<float> v) { return Tensor<float>(v); }
Tensor<float> make_matrix() { return arange<float>(6).reshape({2, 3}); }
}  // namespace

TEST_CASE("expressions stored in auto from temporaries evaluate later", "[expr][lazy]") {
  // example-begin auto-temporaries
  auto e = make({1, 2, 3}) + make({10, 20, 30}) * 2.0f;  // both operands are temporaries
  Tensor<float> r = e;                                    // evaluated here, operands still held
  // example-end auto-temporaries
  check_values(r, {21, 42, 63});
  auto red = (make_matrix() * make_matrix()).sum({1});
  auto arg = argmax(make_matrix() - 1.0f, 1);
  auto sm = softmax(make_matrix(), 1);
  auto mm = relu(matmul(make_matrix(), make_matrix().t()) - 5.0f);
  auto cast = to<int32_t>(make_matrix() * 1.5f);
  auto wh = where(make_matrix() > 2.0f, make_matrix(), -1);
  auto nested = exp(log(make({1, 2}) + 0.0f)) + red.eval().slice(0, 0, 2);
  check_values(red, {5, 50});
  check_values(arg, {2, 2});
  check_values(sm.sum({1}), {1, 1}, 1e-6);
  check_values(mm, {0, 9, 9, 45});
  check_values(cast, {0, 1, 3, 4, 6, 7});
  check_values(wh, {-1, -1, -1, 3, 4, 5});
  check_values(nested, {6, 52}, 1e-6);
}

TEST_CASE("nothing is computed before materialization", "[expr][lazy]") {
  Tensor<float> x = {1, 2, 3};
  auto e = x * 10.0f;  // holds a handle to x's storage
  x.at(0) = 100.0f;    // changed after the expression was built
  check_values(e, {1000, 20, 30});
  auto s = x.sum();
  x.at(2) = 0.0f;
  CHECK(s.item() == 102.0f);
  // shape errors are raised when the expression is built, not when it is evaluated
  CHECK_THROWS_AS(x + zeros<float>({2}), ShapeError);
}

TEST_CASE("eval, item and copies of expressions", "[expr][lazy]") {
  Tensor<float> x = {1, 2, 3};
  auto e = x + 1.0f;
  auto copy = e;  // an expression is a value: copies are independent
  Tensor<float> a = e.eval();
  Tensor<float> b = copy.eval();
  CHECK(a.data_ptr() != b.data_ptr());
  CHECK(a.is_contiguous());
  CHECK((x * x).sum().item() == 14.0f);
  CHECK(matmul(x, x).item() == 14.0f);
  CHECK_THROWS_AS((x + 1.0f).item(), ShapeError);
  STATIC_REQUIRE(std::same_as<decltype(e.eval()), Tensor<float>>);
}

TEST_CASE("scalar operands and rank-0 tensors", "[expr][lazy]") {
  Tensor<float> x = {1, 2};
  check_values(1.0f - x, {0, -1});
  check_values(2 / x, {2, 1});
  check_values(-x + 3, {2, 1});
  check_values(x * full<float>({}, 4.0f), {4, 8});
  Tensor<double> d = full<double>({}, 0.5);
  CHECK(d.item() == 0.5);
  CHECK((d * 4).item() == 2.0);
}
