// tests/device/test_exit_tensor.cpp — device tensors that outlive `main` (issue 18, item 2).
// A namespace-scope tensor is destroyed during static destruction, after every function-local
// static created while `main` ran; its PJRT buffer then calls into the plugin registry, which
// must still be there (it used to be a function-local static: heap-use-after-free under ASan
// in Plugin::has from Buffer::reset). The check is that this process exits cleanly, which
// the sanitizer build (scripts/test) turns into a hard failure.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK

#include <vector>  // std::vector

#include <torchtpu/device.hpp>  // Tensor, the device runtime

#include "../test_backend.hpp"  // test_device

using namespace torchtpu;

namespace {
Tensor<float> g_materialized;  // holds a device buffer at exit
Tensor<float> g_pending;       // holds a statement of a deferred graph at exit
std::vector<Tensor<float>> g_many;
}  // namespace

TEST_CASE("exit: device tensors with static storage duration are destroyed safely", "[pjrt]") {
  g_materialized = Tensor<float>({1.0f, 2.0f, 3.0f}).to(ttest::test_device());
  CHECK(g_materialized.cpu().data_ptr()[2] == 3.0f);
  g_pending = Tensor<float>(g_materialized * 2.0f);  // not observed: still pending at exit
  for (int i = 0; i < 3; ++i) g_many.push_back(Tensor<float>(g_materialized + float(i)));
  CHECK(g_many[2].cpu().data_ptr()[0] == 3.0f);
  CHECK(g_pending.device() == ttest::test_device(0));
}
