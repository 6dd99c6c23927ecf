// bench/peer_xtensor.cpp — xtensor 0.24 (with xsimd, -march=native) versions of the workloads.
#include <xtensor/xadapt.hpp>    // xt::adapt
#include <xtensor/xmath.hpp>     // xt::tanh, xt::exp, xt::sum, xt::amax
#include <xtensor/xtensor.hpp>   // xt::xtensor
#include <xtensor/xview.hpp>     // xt::view

#include "peers.hpp"  // Run, buffers

namespace bench {

Run xtensor_w1(const W1Buffers& bf) {
  return [bf] {
    const std::array<size_t, 1> sh{size_t(bf.n)};
    auto x = xt::adapt(bf.x, size_t(bf.n), xt::no_ownership(), sh);
    auto w = xt::adapt(bf.w, size_t(bf.n), xt::no_ownership(), sh);
    auto b = xt::adapt(bf.b, size_t(bf.n), xt::no_ownership(), sh);
    auto y = xt::adapt(bf.y, size_t(bf.n), xt::no_ownership(), sh);
    y = xt::tanh(x * w + b) * (1.0f / (1.0f + xt::exp(-x))) + 0.5f * x;
  };
}

Run xtensor_softmax(const RowsBuffers& r) {
  return [r] {
    const std::array<size_t, 2> sh{size_t(r.r), size_t(r.c)};
    auto x = xt::adapt(r.x, size_t(r.r * r.c), xt::no_ownership(), sh);
    auto y = xt::adapt(r.y, size_t(r.r * r.c), xt::no_ownership(), sh);
    auto mx = xt::eval(xt::amax(x, {1}));
    y = xt::exp(x - xt::view(mx, xt::all(), xt::newaxis()));
    auto s = xt::eval(xt::sum(y, {1}));
    y /= xt::view(s, xt::all(), xt::newaxis());
  };
}

Run xtensor_sum(const RowsBuffers& r, int axis) {
  return [r, axis] {
    const std::array<size_t, 2> sh{size_t(r.r), size_t(r.c)};
    auto x = xt::adapt(r.x, size_t(r.r * r.c), xt::no_ownership(), sh);
    const size_t n = axis == 0 ? size_t(r.c) : size_t(r.r);
    const std::array<size_t, 1> so{n};
    auto y = xt::adapt(r.y, n, xt::no_ownership(), so);
    y = xt::sum(x, {size_t(axis)});
  };
}

}  // namespace bench
