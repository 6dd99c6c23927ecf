// Index arithmetic past 2^31: a 2^31 + 8 element uint8 tensor (zero pages from calloc,
// borrowed with from_blob, so it costs no time to fill) reduced and indexed correctly.
// One such tensor is alive at a time (~2 GiB of address space, a few touched pages).
#include <cstdlib>  // std::calloc, std::free

#include "../ops/testing.hpp"  // check_values, Catch2, torchtpu

using namespace torchtpu;

TEST_CASE("a uint8 tensor of 2^31 + 8 elements is reduced and indexed correctly", "[core][large]") {
  const int64_t n = (int64_t(1) << 31) + 8;
  auto* mem = static_cast<uint8_t*>(std::calloc(size_t(n), 1));
  REQUIRE(mem != nullptr);
  Tensor<uint8_t> x = from_blob(mem, {n}, [](void* p) { std::free(p); });
  CHECK(x.numel() == n);
  // a few nonzero elements, some past 2^31 (would alias 0..7 with 32-bit wraparound)
  x.at(int64_t(0)) = 1;
  x.at(n - 1) = 7;                    // index 2^31 + 7
  x.at(int64_t(1) << 31) = 200;       // index 2^31
  x.at(int64_t(5) + (int64_t(1) << 30)) = 3;
  CHECK(mem[size_t(n - 1)] == 7);
  CHECK(x.at(-1) == 7);
  CHECK(x.at(-8) == 200);

  // sum over every element: int64 accumulation, 2^31 + 8 terms
  CHECK(x.sum().item() == 1 + 7 + 200 + 3);
  // argmax: the flat index past 2^31
  CHECK(x.argmax().item() == int64_t(1) << 31);
  // a view of the tail: offsets past 2^31
  Tensor<uint8_t> tail = x.slice(0, n - 16, n);
  CHECK(tail.storage_offset() == n - 16);
  check_values(tail + 0, {0, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 7});
  // a 2-D view [2, 2^30 + 4]: row sums, and a stepped view over the whole range
  Tensor<uint8_t> rows = x.view({2, -1});
  CHECK(rows.at(1, (int64_t(1) << 30) + 3) == 7);
  Tensor<uint8_t> stepped = x.slice(0, 0, n, int64_t(1) << 30);  // elements 0, 2^30, 2^31
  check_values(stepped, {1, 0, 200});
  // writing through a view past 2^31
  x.slice(0, n - 4, n) = uint8_t(9);
  CHECK(mem[size_t(n - 2)] == 9);
  CHECK(x.at(n - 4) == 9);
}
