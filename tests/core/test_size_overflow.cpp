// tests/core/test_size_overflow.cpp — element counts and byte sizes are computed with overflow
// checks (issue 18, item 3): a shape whose size overflows int64 is a clear error, never a small
// wrapped-around storage that later accesses write past.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, CHECK_THROWS_AS

#include <cstdint>  // int64_t
#include <new>      // std::bad_alloc

#include <torchtpu/torchtpu.hpp>  // Tensor, empty, numel

using namespace torchtpu;

#if defined(__SANITIZE_ADDRESS__)
// ASan aborts on allocations above its limit unless told to fail them like malloc does.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

TEST_CASE("size overflow: numel of shapes whose product overflows int64", "[core]") {
  const int64_t big = int64_t{1} << 62;
  CHECK(numel(Dims{big, 1}) == big);
  CHECK(numel(Dims{big, big, 0}) == 0);  // a zero size wins, whatever the others multiply to
  CHECK(numel(Dims{0, big, big}) == 0);
  CHECK(numel(Dims{}) == 1);
  CHECK_THROWS_AS(numel(Dims{big + 1, 4}), ShapeError);  // was 4: (2^62 + 1) * 4 wraps
  CHECK_THROWS_WITH(numel(Dims{big, big}), Catch::Contains("[4611686018427387904, 4611686018427387904]") &&
                                               Catch::Contains("overflows int64"));
  CHECK(storage_nbytes(Dims{3, 5}, 4) == 60);
  CHECK(storage_nbytes(Dims{big, big, 0}, 8) == 0);
  CHECK_THROWS_WITH(storage_nbytes(Dims{big}, 4), Catch::Contains("Storage size calculation overflowed"));
}

TEST_CASE("size overflow: empty() refuses sizes it cannot allocate", "[core]") {
  const int64_t big = int64_t{1} << 62;
  // Was a 16-byte storage with numel() == 4, so t.at(100, 0) wrote out of bounds.
  CHECK_THROWS_AS(empty<float>({big + 1, 4}), ValueError);
  CHECK_THROWS_WITH(empty<float>({big + 1, 4}), Catch::Contains("Storage size calculation overflowed") &&
                                                    Catch::Contains("[4611686018427387905, 4]"));
  // Was a null data pointer: 2^62 floats are 2^64 bytes, which wrapped to 0.
  CHECK_THROWS_WITH(empty<float>({big}), Catch::Contains("Storage size calculation overflowed"));
  CHECK_THROWS_AS(empty<double>({int64_t{1} << 60}), ValueError);  // 2^63 bytes
  // A size that fits int64 but not in memory: a bad_alloc naming the size, never null data.
  CHECK_THROWS_AS(empty<uint8_t>({big}), std::bad_alloc);
  CHECK_THROWS_WITH(empty<uint8_t>({big}), Catch::Contains("4611686018427387904 bytes"));
  CHECK_THROWS_AS(allocate_storage(~size_t{0}), std::bad_alloc);
  // Zero-size tensors with huge other sizes are fine (and own no memory).
  auto z = empty<float>({big, big, 0});
  CHECK(z.numel() == 0);
  auto ok = empty<float>({3, 4});
  CHECK(ok.numel() == 12);
  CHECK(ok.storage()->nbytes == 48);
}
