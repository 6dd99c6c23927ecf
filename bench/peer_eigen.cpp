// bench/peer_eigen.cpp — Eigen 3.4 versions of the workloads (compiled with -march=native and
// OpenMP so Eigen's GEMM may use threads: the peer at its best).
#include <Eigen/Core>  // Map, Array, Matrix

#include "peers.hpp"  // Run, buffers

namespace bench {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;

void eigen_set_threads(int n) { Eigen::setNbThreads(n); }

Run eigen_w1(const W1Buffers& bf) {
  return [bf] {
    Eigen::Map<const Eigen::ArrayXf> x(bf.x, bf.n), w(bf.w, bf.n), b(bf.b, bf.n);
    Eigen::Map<Eigen::ArrayXf> y(bf.y, bf.n);
    y = (x * w + b).tanh() * x.logistic() + 0.5f * x;
  };
}

Run eigen_gemm(const GemmBuffers& g, bool epilogue) {
  return [g, epilogue] {
    Eigen::Map<const RowMat> a(g.a, g.m, g.k), b(g.b, g.k, g.n);
    Eigen::Map<RowMat> c(g.c, g.m, g.n);
    c.noalias() = a * b;
    if (epilogue) {
      Eigen::Map<const RowVec> bias(g.bias, g.n);
      c = (c.rowwise() + bias).cwiseMax(0.0f);
    }
  };
}

Run eigen_mlp(const MlpBuffers& p) {
  return [p] {
    Eigen::Map<const RowVec> x(p.x, p.d[0]);
    Eigen::Map<const RowMat> w0(p.w[0], p.d[0], p.d[1]), w1(p.w[1], p.d[1], p.d[2]), w2(p.w[2], p.d[2], p.d[3]);
    Eigen::Map<const RowVec> b0(p.b[0], p.d[1]), b1(p.b[1], p.d[2]), b2(p.b[2], p.d[3]);
    Eigen::Map<RowVec> h0(p.h[0], p.d[1]), h1(p.h[1], p.d[2]), y(p.y, p.d[3]);
    h0.noalias() = x * w0;
    h0 = (h0 + b0).cwiseMax(0.0f);
    h1.noalias() = h0 * w1;
    h1 = (h1 + b1).cwiseMax(0.0f);
    y.noalias() = h1 * w2;
    y += b2;
  };
}

Run eigen_softmax(const RowsBuffers& r) {
  return [r] {
    Eigen::Map<const Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> x(r.x, r.r, r.c);
    Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> y(r.y, r.r, r.c);
    for (int64_t i = 0; i < r.r; ++i) {
      const float mx = x.row(i).maxCoeff();
      y.row(i) = (x.row(i) - mx).exp();
      y.row(i) *= 1.0f / y.row(i).sum();
    }
  };
}

Run eigen_sum(const RowsBuffers& r, int axis) {
  return [r, axis] {
    Eigen::Map<const RowMat> x(r.x, r.r, r.c);
    if (axis == 0) {
      Eigen::Map<RowVec> y(r.y, r.c);
      y.noalias() = x.colwise().sum();
    } else {
      Eigen::Map<Eigen::VectorXf> y(r.y, r.r);
      y.noalias() = x.rowwise().sum();
    }
  };
}

}  // namespace bench
