// tests/jit/compare.hpp — the jit tests' measure of how far a result is from its reference.
#pragma once
#include <algorithm>  // std::max
#include <cmath>      // std::abs
#include <cstdint>    // int64_t

#include <catch2/catch.hpp>        // REQUIRE
#include <torchtpu/jit/value.hpp>  // torchtpu::jit::FloatTensor

namespace jit_test {

/// max |a - b| / max |b| (scripts/conformance's measure); `a` and `b` must have equal shapes
/// (REQUIRE). A reference of zeros gives num / 0 (inf, or NaN when both are zero), which no
/// tolerance accepts.
inline double max_rel(const torchtpu::jit::FloatTensor& a, const torchtpu::jit::FloatTensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  const torchtpu::jit::FloatTensor ac = a.contiguous(), bc = b.contiguous();
  double num = 0, den = 0;
  for (int64_t i = 0; i < ac.numel(); ++i) {
    num = std::max(num, double(std::abs(ac.data_ptr()[i] - bc.data_ptr()[i])));
    den = std::max(den, double(std::abs(bc.data_ptr()[i])));
  }
  return num / den;
}

}  // namespace jit_test
