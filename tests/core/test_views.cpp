// Views share storage: slice (with steps), narrow, select, transpose, permute, t, view vs
// reshape (view when possible, copy otherwise, like torch), flatten, squeeze, unsqueeze,
// expand; their errors; writing through views.
#include "../ops/testing.hpp"  // check_values, Catch2, torchtpu

#include <torchtpu/core/any_tensor.hpp>  // AnyTensor::from_storage

using namespace torchtpu;

TEST_CASE("slice, narrow and select share storage", "[core][views]") {
  Tensor<float> x = arange<float>(24).reshape({4, 6});
  // example-begin slice
  Tensor<float> s = x.slice(1, 1, 6, 2);  // columns 1, 3, 5 (Python x[:, 1:6:2])
  // example-end slice
  CHECK(s.sizes() == Dims{4, 3});
  CHECK(s.strides() == Dims{6, 2});
  CHECK(s.storage_offset() == 1);
  CHECK(s.storage() == x.storage());
  CHECK(s.at(2, 1) == 15.0f);
  check_values(x.slice(0, -2, 100), values_of(x.slice(0, 2, 4)));  // clamped, negative start
  CHECK(x.slice(0, 3, 1).sizes() == Dims{0, 6});                    // empty, not an error
  CHECK(x.slice(1, 0, 6, 4).sizes() == Dims{4, 2});
  check_values(x.narrow(0, 1, 2).select(1, -1), {11, 17});
  check_values(x[3], {18, 19, 20, 21, 22, 23});
  CHECK(x.select(0, 1).sizes() == Dims{6});
  CHECK_THROWS_AS(x.slice(0, 0, 2, 0), ValueError);
  CHECK_THROWS_AS(x.narrow(1, 4, 3), IndexError);
  CHECK_THROWS_AS(x.select(0, 4), IndexError);
  CHECK_THROWS_WITH(x.select(0, -5), "select: index -5 out of range for dim 0 of size 4 (shape [4, 6])");
  CHECK_THROWS_AS(x.slice(2, 0, 1), IndexError);
}

TEST_CASE("transpose, permute and t", "[core][views]") {
  Tensor<float> x = arange<float>(24).reshape({2, 3, 4});
  Tensor<float> p = x.permute({2, 0, 1});
  CHECK(p.sizes() == Dims{4, 2, 3});
  CHECK(p.strides() == Dims{1, 12, 4});
  CHECK(p.at(3, 1, 2) == x.at(1, 2, 3));
  CHECK(x.transpose(0, -1).sizes() == Dims{4, 3, 2});
  CHECK(x.transpose(0, -1).at(3, 2, 1) == 23.0f);
  Tensor<float> m = {{1, 2, 3}, {4, 5, 6}};
  check_values(m.t(), {1, 4, 2, 5, 3, 6});
  CHECK(!m.t().is_contiguous());
  CHECK(m.t().data_ptr() == m.data_ptr());
  check_values(Tensor<float>{1, 2}.t(), {1, 2});  // 1-D: unchanged
  CHECK_THROWS_AS(x.t(), ShapeError);             // dynamic rank 3: run-time error
  CHECK_THROWS_AS(x.permute({0, 0, 1}), ShapeError);
  CHECK_THROWS_AS(x.permute({0, 1}), ShapeError);
}

TEST_CASE("view shares storage or fails; reshape copies only when it must", "[core][views]") {
  Tensor<float> x = arange<float>(12).reshape({3, 4});
  Tensor<float> v = x.view({2, 6});
  CHECK(v.data_ptr() == x.data_ptr());
  CHECK(x.view({-1}).sizes() == Dims{12});
  CHECK(x.view({2, -1, 3}).sizes() == Dims{2, 2, 3});
  // a transposed tensor cannot be viewed flat ...
  CHECK_THROWS_AS(x.t().view({12}), ShapeError);
  CHECK_THROWS_WITH(x.t().view({12}),
                    Catch::StartsWith("view: size [12] is not compatible with input strides [1, 4] of shape [4, 3]"));
  // ... but reshape copies it (values in the view's row-major order)
  Tensor<float> r = x.t().reshape({12});
  CHECK(r.data_ptr() != x.data_ptr());
  check_values(r, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  // reshape of a viewable tensor is a view (like torch), also for split/merged dims of a slice
  CHECK(x.reshape({4, 3}).data_ptr() == x.data_ptr());
  Tensor<float> rows = x.slice(0, 1, 3);  // contiguous rows 1..2
  CHECK(rows.reshape({8}).data_ptr() == rows.data_ptr());
  Tensor<float> cols = x.slice(1, 0, 2);  // [3, 2] with row stride 4: merging dims needs a copy
  CHECK(cols.reshape({6}).data_ptr() != cols.data_ptr());
  CHECK(cols.reshape({3, 2, 1}).data_ptr() == cols.data_ptr());  // adding a size-1 dim: view
  check_values(cols.reshape({6}), {0, 1, 4, 5, 8, 9});
  // views of an expanded (stride-0) tensor
  Tensor<float> e = Tensor<float>{1, 2}.expand({3, 2});
  CHECK(e.view({3, 1, 2}).strides() == Dims{0, 2, 1});
  // rank 0 <-> [1]
  Tensor<float> s = full<float>({}, 3.0f);
  CHECK(s.reshape({1}).sizes() == Dims{1});
  CHECK(s.view({1, 1}).item() == 3.0f);
  CHECK(Tensor<float>{5}.view({}).dim() == 0);
  // empty tensors
  CHECK(zeros<float>({0, 4}).view({4, 0, 2}).sizes() == Dims{4, 0, 2});
  // errors
  CHECK_THROWS_AS(x.view({5, -1}), ShapeError);
  CHECK_THROWS_AS(x.view({-1, -1}), ShapeError);
  CHECK_THROWS_WITH(x.reshape({5}), "reshape: shape [5] is invalid for input of size 12 (shape [3, 4])");
}

TEST_CASE("flatten, squeeze, unsqueeze and expand", "[core][views]") {
  Tensor<float> x = zeros<float>({2, 1, 3, 1});
  CHECK(x.squeeze().sizes() == Dims{2, 3});
  CHECK(x.squeeze(1).sizes() == Dims{2, 3, 1});
  CHECK(x.squeeze(0).sizes() == Dims{2, 1, 3, 1});  // size 2: unchanged
  CHECK(x.unsqueeze(0).sizes() == Dims{1, 2, 1, 3, 1});
  CHECK(x.unsqueeze(-1).sizes() == Dims{2, 1, 3, 1, 1});
  CHECK(x.flatten().sizes() == Dims{6});
  CHECK(x.flatten(1, 2).sizes() == Dims{2, 3, 1});
  CHECK(full<float>({}, 1.0f).flatten().sizes() == Dims{1});
  CHECK_THROWS_AS(x.unsqueeze(5), IndexError);
  CHECK_THROWS_AS(x.flatten(2, 1), IndexError);
  Tensor<float> v = {1, 2, 3};
  Tensor<float> e = v.expand({2, 3});
  CHECK(e.strides() == Dims{0, 1});
  CHECK(e.data_ptr() == v.data_ptr());
  check_values(e, {1, 2, 3, 1, 2, 3});
  CHECK(v.unsqueeze(1).expand({-1, 4}).sizes() == Dims{3, 4});
  CHECK(v.broadcast_to({2, 2, 3}).sizes() == Dims{2, 2, 3});
  CHECK_THROWS_AS(v.expand({2, 4}), ShapeError);
  CHECK_THROWS_AS(v.expand({3}).expand({2}), ShapeError);
  CHECK_THROWS_WITH(v.expand({2, 4}), "expand: shape [3] cannot be expanded to [2, 4] (size 3 at dim 0)");
}

TEST_CASE("writing through views", "[core][views]") {
  Tensor<float> x = zeros<float>({3, 4});
  x.slice(1, 0, 4, 2) = 1.0f;                  // fill every other column
  x.select(0, 2) = Tensor<float>{5, 6, 7, 8};  // copy a row
  x.t().select(0, 3) += 10.0f;                 // add to a column through a transposed view
  check_values(x, {1, 0, 1, 10, 1, 0, 1, 10, 5, 6, 7, 18});
  x.narrow(0, 0, 2) = Tensor<float>{9, 9, 9, 9};  // broadcast a row over two rows
  check_values(x.sum({1}), {36, 36, 36});
  CHECK_THROWS_AS((x.select(0, 0) = Tensor<float>{1, 2}), ShapeError);
}

TEST_CASE("contiguous, clone and handle semantics", "[core][tensor]") {
  Tensor<float> x = arange<float>(6).reshape({2, 3});
  CHECK(x.contiguous().data_ptr() == x.data_ptr());
  Tensor<float> c = x.t().contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.data_ptr() != x.data_ptr());
  check_values(c, {0, 3, 1, 4, 2, 5});
  Tensor<float> k = x.clone();
  k.at(0, 0) = 100.0f;
  CHECK(x.at(0, 0) == 0.0f);
  Tensor<float> h = x;  // a handle copy shares data
  h.at(1, 2) = -1.0f;
  CHECK(x.at(1, 2) == -1.0f);
  // assigning an expression to a sole-owner tensor of the same shape reuses its memory
  Tensor<float> y = zeros<float>({2, 3});
  const float* before = y.data_ptr();
  y = x * 2.0f;
  CHECK(y.data_ptr() == before);
  check_values(y, {0, 2, 4, 6, 8, -2});
  // ... and rebinds when someone else holds it
  Tensor<float> other = y;
  y = x + 1.0f;
  CHECK(y.data_ptr() != other.data_ptr());
  check_values(other, {0, 2, 4, 6, 8, -2});
  // a = a.t() on a handle rebinds to the transposed view (torch semantics)
  Tensor<float> a = {{1, 2}, {3, 4}};
  a = a.t();
  check_values(a, {1, 3, 2, 4});
  a = a.t() * 1.0f;  // an expression of itself: evaluated before a is replaced
  check_values(a, {1, 2, 3, 4});
}

// Issue 18 item 13: views that make no sense are refused with clear errors.
TEST_CASE("slice with a huge step, expand with a negative size", "[core][views]") {
  const Tensor<float> x = arange<float>(10);
  const Tensor<float> s = x.slice(0, 0, 10, std::numeric_limits<int64_t>::max());  // one element
  CHECK(s.sizes() == Dims{1});
  check_values(s, {0});
  CHECK(x.slice(0, 3, 10, int64_t(1) << 62).sizes() == Dims{1});
  CHECK(x.slice(0, 10, 10, std::numeric_limits<int64_t>::max()).numel() == 0);
  check_values(x.slice(0, 1, 10, 4), {1, 5, 9});  // ceil(9 / 4) = 3
  check_values(x.slice(0, 1, 9, 4), {1, 5});      // ceil(8 / 4) = 2
  CHECK_THROWS_AS(x.narrow(0, 2, std::numeric_limits<int64_t>::max()), IndexError);
  const Tensor<float> one = ones<float>({1});
  CHECK_THROWS_AS(one.expand({-3}), ShapeError);
  CHECK_THROWS_WITH(one.expand({-3}), Catch::Matchers::Contains("expand") && Catch::Matchers::Contains("-3"));
  CHECK_THROWS_AS(one.expand({2, -2}), ShapeError);
  CHECK_THROWS_AS(one.expand({-1, 2}), ShapeError);  // -1 in a new leading dim
  CHECK(one.expand({-1}).sizes() == Dims{1});       // -1 keeps the size
  CHECK(one.expand({3, -1}).sizes() == (Dims{3, 1}));
  // view/reshape sizes whose product overflows int64
  CHECK_THROWS_AS(x.view({int64_t(1) << 40, int64_t(1) << 40, 0}), ShapeError);
  CHECK_THROWS_AS(x.reshape({-1, int64_t(1) << 62, 4}), ShapeError);
}

TEST_CASE("Tensor(Storage, sizes, strides, offset) checks the view against the storage", "[core][views]") {
  const Storage st = allocate_storage(10 * sizeof(float));  // 10 floats
  for (int i = 0; i < 10; ++i) static_cast<float*>(st->data)[i] = float(i);
  // in bounds: accepted, the values are those at the computed positions
  check_values(Tensor<float>(st, {5}, {2}, 0), {0, 2, 4, 6, 8});
  check_values(Tensor<float>(st, {3}, {-3}, 9), {9, 6, 3});  // negative stride down to 3
  check_values(Tensor<float>(st, {2, 2}, {-5, 1}, 5), {5, 6, 0, 1});
  CHECK(Tensor<float>(st, {0}, {1}, 10).numel() == 0);  // empty: nothing read
  // out of bounds, in every direction
  CHECK_THROWS_AS(Tensor<float>(st, {11}, {1}, 0), ShapeError);
  CHECK_THROWS_AS(Tensor<float>(st, {5}, {1}, 6), ShapeError);
  CHECK_THROWS_AS(Tensor<float>(st, {5}, {-1}, 3), ShapeError);  // reaches element -1
  CHECK_THROWS_AS(Tensor<float>(st, {2}, {1}, -1), ShapeError);
  CHECK_THROWS_AS(Tensor<float>(st, {-2}, {1}, 0), ShapeError);
  CHECK_THROWS_AS(Tensor<float>(st, {2}, {1, 1}, 0), ShapeError);
  CHECK_THROWS_AS(Tensor<double>(st, {6}, {1}, 0), ShapeError);  // 48 bytes of 40
  CHECK_THROWS_AS(Tensor<float>(st, {3}, {std::numeric_limits<int64_t>::max()}, 0), ShapeError);
  CHECK_THROWS_AS(Tensor<float>(st, {2, 2}, {int64_t(1) << 62, int64_t(1) << 62}, 0), ShapeError);
  CHECK_THROWS_WITH(Tensor<float>(st, {11}, {1}, 0), Catch::Matchers::Contains("[11]") &&
                                                       Catch::Matchers::Contains("float32") &&
                                                       Catch::Matchers::Contains("40 bytes"));
  // the run-time-typed form checks the same way (by the dtype's element size)
  CHECK(AnyTensor::from_storage(ScalarType::Float, st, {10}, {1}, 0).numel() == 10);
  CHECK_THROWS_AS(AnyTensor::from_storage(ScalarType::Double, st, {10}, {1}, 0), ShapeError);
  CHECK_THROWS_AS(AnyTensor::from_storage(ScalarType::Int32, st, {4}, {-3}, 8), ShapeError);
  CHECK(AnyTensor::from_storage(ScalarType::Int64, st, {5}, {1}, 0).numel() == 5);
  CHECK_THROWS_AS(AnyTensor::from_storage(ScalarType::Int64, st, {5}, {1}, 1), ShapeError);
  // from_blob with negative strides: the view reaches below `data`, and is accepted
  std::vector<float> buf = {0, 1, 2, 3, 4, 5};
  check_values(from_blob(buf.data() + 5, {6}, [](void*) {}, Dims{-1}), {5, 4, 3, 2, 1, 0});
  check_values(from_blob(buf.data() + 3, {2, 3}, [](void*) {}, Dims{-3, 1}), {3, 4, 5, 0, 1, 2});
}
