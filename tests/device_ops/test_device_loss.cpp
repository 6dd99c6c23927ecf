// tests/device_ops/test_device_loss.cpp — the nn family of the operator library (ops/loss.hpp:
// log_softmax, mse_loss, nll_loss_nd, cross_entropy_loss, dropout, pixel_shuffle /
// pixel_unshuffle, embedding_bag) on the PJRT device under test, in each execution mode,
// against the same calls on the cpu: every dtype each op claims, weights present and absent,
// ignored targets, label smoothing, probability targets, a transposed (non-contiguous)
// operand, and the errors of the device path (a target or index out of range is a run-time
// check: IndexError when the result is read; active dropout is UnsupportedOperator).
//
// Tolerance: the device computes in float32 (float64 for float64) and sums in another order;
// the cpu computes in float64 and rounds once (log_softmax: the fused float32 node). Relative
// + absolute 1e-5 for float32, 1e-12 for float64, 4e-3 for float16, 3.2e-2 for bfloat16 (a
// few ulps of O(1) results). pixel_shuffle and dropout's inactive forms are exact.
#include <string>  // std::string

#include <torchtpu/ops/loss.hpp>  // the ops under test

#include "helpers.hpp"  // check_close, test_device, test_input

using namespace torchtpu;

namespace {

template <class T>
double tol() { return per_dtype<T>(1e-12, 1e-5, 4e-3, 3.2e-2); }

Tensor<int64_t> ids(std::vector<int64_t> v, Dims s) { return from_data(v.data(), s); }

template <class T>
void check_losses() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const double e = tol<T>();
  // log_softmax along each dim, a transposed operand
  const Tensor<T> x = input<T>({3, 5}, 1), y = input<T>({5}, 2);
  const AnyTensor ax(x), adx(x.to(dev));
  for (int64_t d : {0, 1, -1}) check_close(log_softmax(adx, d).template get<T>(), log_softmax(ax, d).template get<T>(), e, e);
  check_close(log_softmax(AnyTensor(Tensor<T>(x.to(dev).t())), 1).template get<T>(),
              log_softmax(AnyTensor(Tensor<T>(x.t())), 1).template get<T>(), e, e);
  // mse_loss, broadcasting [3, 5] with [5]
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
    check_close(mse_loss(x.to(dev), y.to(dev), r), mse_loss(x, y, r), e, e);
  // nll_loss and cross_entropy: weight, ignore_index, label smoothing, [N, C, d]
  const Tensor<T> w = input<T>({5}, 3, 0.25, 2.0);
  const Tensor<int64_t> t = ids({4, -100, 0}, Dims{3});
  const auto dw = w.to(dev);
  const auto dt = t.to(dev);
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    INFO("reduction " << int(r));
    check_close(nll_loss(x.to(dev), dt, {}, r), nll_loss(x, t, {}, r), e, e);
    check_close(nll_loss(x.to(dev), dt, dw, r), nll_loss(x, t, w, r), e, e);
    check_close(cross_entropy(x.to(dev), dt, dw, r), cross_entropy(x, t, w, r), e, e);
    check_close(cross_entropy(x.to(dev), dt, {}, r, -100, 0.2), cross_entropy(x, t, {}, r, -100, 0.2), e, e);
    const Tensor<int64_t> t0 = ids({4, 0, 2}, Dims{3});  // ignore_index 0
    check_close(cross_entropy(x.to(dev), t0.to(dev), dw, r, 0, 0.1), cross_entropy(x, t0, w, r, 0, 0.1), e, e);
    // probability targets (the input's shape), with weight and smoothing
    const Tensor<T> p = input<T>({3, 5}, 4, 0.0, 1.0);
    check_close(cross_entropy(x.to(dev), p.to(dev), {}, r), cross_entropy(x, p, {}, r), e, e);
    check_close(cross_entropy(x.to(dev), p.to(dev), dw, r, -100, 0.3), cross_entropy(x, p, w, r, -100, 0.3), e, e);
    const Tensor<T> x3 = input<T>({2, 5, 3}, 5);
    const Tensor<int64_t> t3 = ids({0, 4, 2, 1, 1, 3}, Dims{2, 3});
    check_close(nll_loss(x3.to(dev), t3.to(dev), dw, r), nll_loss(x3, t3, w, r), e, e);
    check_close(cross_entropy(x3.to(dev), t3.to(dev), {}, r, -100, 0.1), cross_entropy(x3, t3, {}, r, -100, 0.1), e, e);
  }
  // a [C] input with a 0-dim target
  check_close(cross_entropy(y.to(dev), ids({2}, Dims{}).to(dev)), cross_entropy(y, ids({2}, Dims{})), e, e);
  // pixel_shuffle / pixel_unshuffle: exact
  const Tensor<T> ps = input<T>({2, 8, 2, 3}, 6);
  check_close(pixel_shuffle(ps.to(dev), 2), pixel_shuffle(ps, 2), 0.0);
  const Tensor<T> pu = input<T>({2, 2, 6, 4}, 10);  // transposed: [2, 2, 4, 6], non-contiguous
  check_close(pixel_unshuffle(Tensor<T>(pu.to(dev).transpose(2, 3)), 2), pixel_unshuffle(Tensor<T>(pu.transpose(2, 3)), 2), 0.0);
  // embedding_bag: modes, an empty bag, padding_idx, per_sample_weights, include_last_offset
  const Tensor<T> table = input<T>({6, 4}, 7);
  const Tensor<int64_t> idx = ids({1, 2, 5, 0, 3, 3, 2}, Dims{7}), off = ids({0, 3, 3, 5}, Dims{4});
  const auto dtab = table.to(dev);
  const auto didx = idx.to(dev), doff = off.to(dev);
  using M = EmbeddingBagMode;
  for (M m : {M::Sum, M::Mean, M::Max}) {
    INFO("mode " << int(m));
    check_close(embedding_bag(dtab, didx, doff, m), embedding_bag(table, idx, off, m), e, e);
    check_close(embedding_bag(dtab, didx, doff, m, {}, false, 3), embedding_bag(table, idx, off, m, {}, false, 3), e, e);
    check_close(embedding_bag(dtab, didx, ids({0, 3, 3, 7}, Dims{4}).to(dev), m, {}, true),
                embedding_bag(table, idx, ids({0, 3, 3, 7}, Dims{4}), m, {}, true), e, e);
  }
  const Tensor<T> psw = input<T>({7}, 8);
  check_close(embedding_bag(dtab, didx, doff, M::Sum, psw.to(dev)), embedding_bag(table, idx, off, M::Sum, psw), e, e);
}

template <class T>
void check_moves() {
  INFO("dtype " << dtype_name(dtype_of<T>()));
  const auto dev = test_device();
  const Tensor<T> x = Tensor<T>(test_input({1, 4, 2, 4}, 9, 0.0, 3.0).template to<T>());
  check_close(pixel_shuffle(x.to(dev), 2), pixel_shuffle(x, 2), 0.0);
  check_close(pixel_unshuffle(x.to(dev), 2), pixel_unshuffle(x, 2), 0.0);
  // inactive dropout: the values; p = 1: zeros
  check_close(dropout(x.to(dev), 0.5, false), x, 0.0);
  check_close(dropout(x.to(dev), 1.0, true), dropout(x, 1.0, true), 0.0);
}

}  // namespace

TEST_CASE("nn ops on the device: every floating dtype, every mode", "[pjrt][library][loss]") {
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    check_losses<float>();
  }
  check_losses<double>();  // the other dtypes in the default mode
  check_losses<half>();
  check_losses<bfloat16>();
}

TEST_CASE("pixel_shuffle and inactive dropout on the device: every dtype", "[pjrt][library][loss]") {
  check_moves<float>();
  check_moves<double>();
  check_moves<half>();
  check_moves<bfloat16>();
  check_moves<int64_t>();
  check_moves<int32_t>();
  check_moves<uint8_t>();
  check_moves<bool>();
}

TEST_CASE("nn ops on the device: between elementwise statements, errors", "[pjrt][library][loss]") {
  const auto dev = test_device();
  const Tensor<float> x = test_input({4, 3}, 11);
  const Tensor<int64_t> t = ids({2, 0, 1, 1}, Dims{4});
  for (ExecutionMode m : {ExecutionMode::Fused, ExecutionMode::Strict, ExecutionMode::Debug}) {
    ExecutionModeGuard g(m);
    INFO("mode " << execution_mode_name(m));
    // loss = cross_entropy(x * 2 + 1, t) * 3 in three statements
    Tensor<float> dx = x.to(dev) * 2.0f + 1.0f;
    const Tensor<float> dl = cross_entropy(dx, t.to(dev)) * 3.0f;
    const Tensor<float> cx = x * 2.0f + 1.0f;
    check_close(dl, Tensor<float>(cross_entropy(cx, t) * 3.0f), 1e-5, 1e-5);
  }
  // a target out of range: a run-time check, IndexError when the result is read
  auto read = [](const Tensor<float>& v) { return Tensor<float>(v.cpu()); };
  const Tensor<float> bad = nll_loss(x.to(dev), ids({2, 3, 0, 0}, Dims{4}).to(dev));
  CHECK_THROWS_AS(read(bad), IndexError);
  CHECK_THROWS_WITH(read(bad), Catch::Contains("aten::nll_loss_nd: a target is out of bounds for 3 classes"));
  CHECK_THROWS_AS(read(cross_entropy(x.to(dev), ids({-1, 0, 0, 0}, Dims{4}).to(dev))), IndexError);
  CHECK_THROWS_AS(read(embedding_bag(x.to(dev), ids({0, 4}, Dims{2}).to(dev), ids({0}, Dims{1}).to(dev))), IndexError);
  // ignore_index is not out of range
  CHECK_NOTHROW(read(nll_loss(x.to(dev), ids({2, -100, 0, 0}, Dims{4}).to(dev))));
  // active dropout has no random numbers on devices; the shape rules run before anything is recorded
  CHECK_THROWS_AS(dropout(x.to(dev), 0.5, true), UnsupportedOperator);
  CHECK_THROWS_AS(dropout(AnyTensor(x.to(dev)), 0.5, true), UnsupportedOperator);
  CHECK_THROWS_AS(mse_loss(x.to(dev), Tensor<float>(test_input({4}, 12).to(dev))), ShapeError);
  CHECK_THROWS_AS(pixel_shuffle(Tensor<float>(test_input({1, 3, 2, 2}, 13).to(dev)), 2), ShapeError);
  CHECK_THROWS_AS(nll_loss(x.to(dev), ids({0, 0, 0}, Dims{3}).to(dev)), ValueError);
}
