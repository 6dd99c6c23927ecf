// Smoke test of the core: a fused expression, a matmul with epilogue, a reduction.
#include <catch2/catch.hpp>  // Catch2 v2

#include <torchtpu/torchtpu.hpp>  // the library

using namespace torchtpu;

TEST_CASE("fused elementwise expression matches hand-computed values", "[core]") {
  Tensor<float> a = {{1, 2, 3}, {4, 5, 6}};
  Tensor<float> b = {10, 20, 30};
  Tensor<float> c = a * b + 1.0f;
  CHECK(c.at(0, 0) == 11.0f);
  CHECK(c.at(1, 2) == 181.0f);
}

TEST_CASE("matmul with relu epilogue", "[core]") {
  Tensor<float> a = {{1, 2, 3}, {4, 5, 6}};
  Tensor<float> d = relu(matmul(a, a.t()) - 30.0f);
  // a a^T = [[14, 32], [32, 77]]
  CHECK(d.at(0, 0) == 0.0f);
  CHECK(d.at(0, 1) == 2.0f);
  CHECK(d.at(1, 1) == 47.0f);
}

TEST_CASE("x += x.t() equals the unfused result", "[core][alias]") {
  Tensor<float> x = {{1, 2}, {3, 4}};
  x += x.t();
  CHECK(x.at(0, 1) == 5.0f);
  CHECK(x.at(1, 0) == 5.0f);
  CHECK(x.at(1, 1) == 8.0f);
}
