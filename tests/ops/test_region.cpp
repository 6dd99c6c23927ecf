// tests/ops/test_region.cpp — the run-time elementwise region executor alone (ops/region.hpp,
// no model graph): a program of steps over registers gives, bit for bit, what the typed path's
// fused expression gives for the same ops, for operands read directly, as one-element
// constants, and expanded per block through broadcast and non-contiguous strides; sizes that
// span several 4096-element blocks and threads, and sizes that are no multiple of the vector
// width. In the address-sanitizer subset (scripts/test): the expansion reads through strides.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, REQUIRE

#include <cstring>  // std::memcmp
#include <utility>  // std::swap
#include <vector>   // std::vector

#include <torchtpu/core/factories.hpp>  // randn, Generator
#include <torchtpu/ops/region.hpp>      // RegionProgram, run_region, region_op_id
#include <torchtpu/torchtpu.hpp>        // add, mul, silu, clamp, ... (the typed reference)

namespace {

using torchtpu::Dims;
using torchtpu::Tensor;
namespace o = torchtpu::ops;

/// Same shape and the same bits (both read in row-major order).
bool same_bits(const Tensor<float>& a, const Tensor<float>& b) {
  if (!(a.sizes() == b.sizes())) return false;
  const Tensor<float> x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), size_t(x.numel()) * sizeof(float)) == 0;
}

/// The program `silu(clamp(in0 + in1, -0.5, 0.75)) * 3 - sigmoid(in2)`.
o::RegionProgram program() {
  o::RegionProgram p;
  auto x = p.binary(o::region_op_id<torchtpu::AddOp>(), o::RegionOperand::input(0), o::RegionOperand::input(1));
  x = p.unary(o::region_op_id<torchtpu::ClampOp>(), x, -0.5, 0.75);
  x = p.unary(o::region_op_id<torchtpu::SiluOp>(), x);
  x = p.binary(o::region_op_id<torchtpu::MulOp>(), x, o::RegionOperand::constant(3.0f));
  const auto s = p.unary(o::region_op_id<torchtpu::SigmoidOp>(), o::RegionOperand::input(2));
  p.binary(o::region_op_id<torchtpu::SubOp>(), x, s);
  p.allocate();
  return p;
}

/// The same computation through the typed API (each op materialized, as the unfused model
/// graph computes it).
Tensor<float> typed(const Tensor<float>& a, const Tensor<float>& b, const Tensor<float>& c) {
  const Tensor<float> x(torchtpu::add(a, b));
  const Tensor<float> y(torchtpu::clamp(x, -0.5, 0.75));
  const Tensor<float> z(torchtpu::silu(y));
  const Tensor<float> w(torchtpu::mul(z, 3.0f));
  const Tensor<float> s(torchtpu::sigmoid(c));
  return Tensor<float>(torchtpu::sub(w, s));
}

}  // namespace

TEST_CASE("region executor: registers are reused and a bad program is refused", "[ops][region]") {
  const o::RegionProgram p = program();
  CHECK(p.n_regs == 2);  // the chain's value and sigmoid(in2) are live together
  o::RegionProgram q;
  CHECK_THROWS_AS(q.unary(o::region_op_id<torchtpu::AddOp>(), o::RegionOperand::input(0)), torchtpu::ValueError);
  CHECK_THROWS_AS(q.binary(o::region_op_id<torchtpu::ExpOp>(), o::RegionOperand::input(0), o::RegionOperand::input(1)),
                  torchtpu::ValueError);
  q.binary(o::region_op_id<torchtpu::AddOp>(), o::RegionOperand::input(0), o::RegionOperand::input(5));
  q.allocate();
  const std::vector<Tensor<float>> one{torchtpu::zeros<float>(Dims{4})};
  CHECK_THROWS_AS(o::run_region(q, one, Dims{4}), torchtpu::ValueError);  // input 5 does not exist
}

TEST_CASE("region executor: direct, constant, broadcast and strided operands equal the typed path bit for bit",
          "[ops][region]") {
  const o::RegionProgram p = program();
  torchtpu::Generator gen(7);
  for (const Dims& shape : {Dims{2, 64, 23, 29}, Dims{3, 9001}, Dims{5, 7}, Dims{1}, Dims{}}) {
    const int64_t r = int64_t(shape.size());
    const Tensor<float> a = torchtpu::randn<float>(shape, gen) * 2.0f;
    {  // every operand contiguous with the output
      const Tensor<float> b = torchtpu::randn<float>(shape, gen), c = torchtpu::randn<float>(shape, gen);
      const std::vector<Tensor<float>> in{a, b, c};
      INFO("shape rank " << r << ", numel " << a.numel());
      CHECK(same_bits(o::run_region(p, in, shape), typed(a, b, c)));
    }
    {  // a 0-dim operand and a broadcast last dim
      const Tensor<float> b = torchtpu::randn<float>(Dims{}, gen);
      Dims last;  // [1, ..., 1, shape[-1]]
      for (int64_t d = 0; d < r; ++d) last.push_back(d == r - 1 ? shape[size_t(d)] : 1);
      const Tensor<float> c = torchtpu::randn<float>(last, gen);
      const std::vector<Tensor<float>> in{a, b, c};
      INFO("shape rank " << r << ", numel " << a.numel());
      CHECK(same_bits(o::run_region(p, in, shape), typed(a, b, c)));
    }
    if (r >= 2) {
      {  // an [N, C, 1, 1]-style operand and a transposed (non-contiguous) one
        Dims lead;  // [N, C, 1, ...]
        for (int64_t d = 0; d < r; ++d) lead.push_back(d < 2 ? shape[size_t(d)] : 1);
        const Tensor<float> b = torchtpu::randn<float>(lead, gen);
        Dims swapped = shape;
        std::swap(swapped[size_t(r - 2)], swapped[size_t(r - 1)]);
        const Tensor<float> c = torchtpu::randn<float>(swapped, gen).transpose(r - 2, r - 1);
        REQUIRE_FALSE(c.is_contiguous());
        const std::vector<Tensor<float>> in{a, b, c};
        INFO("shape rank " << r << ", numel " << a.numel());
      CHECK(same_bits(o::run_region(p, in, shape), typed(a, b, c)));
      }
    }
  }
}

TEST_CASE("region executor: hand-computed values and an empty output", "[ops][region]") {
  o::RegionProgram p;  // (in0 - in1) / 4 then relu
  auto x = p.binary(o::region_op_id<torchtpu::SubOp>(), o::RegionOperand::input(0), o::RegionOperand::input(1));
  x = p.binary(o::region_op_id<torchtpu::DivOp>(), x, o::RegionOperand::constant(4.0f));
  p.unary(o::region_op_id<torchtpu::ReluOp>(), x);
  p.allocate();
  const Tensor<float> a = torchtpu::arange<float>(0, 6).view({2, 3});
  const Tensor<float> b = torchtpu::arange<float>(0, 3) * 2.0f;  // [0, 2, 4], broadcast over rows
  const std::vector<Tensor<float>> in{a, b};
  const Tensor<float> y = o::run_region(p, in, Dims{2, 3});
  // rows: [0-0, 1-2, 2-4] / 4 = [0, -0.25, -0.5] -> relu [0, 0, 0]; [3, 2, 1] / 4
  const std::vector<float> want{0.0f, 0.0f, 0.0f, 0.75f, 0.5f, 0.25f};
  REQUIRE(y.numel() == 6);
  for (int64_t i = 0; i < 6; ++i) CHECK(y.data_ptr()[i] == want[size_t(i)]);
  const std::vector<Tensor<float>> none{torchtpu::zeros<float>(Dims{0, 3}), b};
  CHECK(o::run_region(p, none, Dims{0, 3}).numel() == 0);
}
