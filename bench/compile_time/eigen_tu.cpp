// Compile-time benchmark TU: Eigen 3.4 arrays, the same 10-op elementwise expression.
#include <Eigen/Core>  // Eigen::ArrayXXf

float run(const Eigen::ArrayXXf& a, const Eigen::ArrayXXf& b, const Eigen::ArrayXXf& c) {
  Eigen::ArrayXXf r = ((a * b + c).exp() - a.abs().sqrt() / (b + 1.0f) * c.tanh()).max(0.0f);
  return r(0, 0);
}
