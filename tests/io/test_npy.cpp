// Tests of torchtpu/io/npy.hpp against .npy fixtures written by NumPy 1.24
// (tests/io/fixtures/make_fixtures.py); expected values are written here by hand.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, CHECK_THROWS_AS, Catch::Matchers

#include <cmath>        // std::signbit
#include <cstddef>      // std::byte
#include <cstdint>      // int64_t, int32_t, uint8_t
#include <cstdio>       // std::remove
#include <span>         // std::span
#include <string>       // std::string
#include <vector>       // std::vector

#include <torchtpu/io/npy.hpp>  // read_npy, parse_npy, write_npy, to_npy_bytes, NpyArray

#ifndef TORCHTPU_IO_FIXTURES
#error "TORCHTPU_IO_FIXTURES must name the tests/io/fixtures directory"
#endif

namespace {

using torchtpu::NpyArray;
using torchtpu::ScalarType;

std::string fixture(const std::string& name) { return std::string(TORCHTPU_IO_FIXTURES) + "/" + name; }

std::vector<std::byte> file_bytes(const std::string& path) {
  std::vector<std::byte> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::byte buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

template <class T>
std::vector<T> to_vector(std::span<const T> s) {
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("read_npy: float32 2-D", "[io][npy]") {
  // example-begin npy-read
  const NpyArray a = torchtpu::read_npy(fixture("f4_2x3.npy"));
  CHECK(a.dtype == ScalarType::Float);
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.numel() == 6);
  std::span<const float> v = a.values<float>();  // C order: row 0, then row 1
  // example-end npy-read
  REQUIRE(v.size() == 6);
  CHECK(v[0] == 1.5f);
  CHECK(v[1] == -2.0f);
  CHECK(v[2] == 0.25f);
  CHECK(v[3] == 3.0f);
  CHECK(v[4] == 0.004f);
  CHECK(v[5] == 0.0f);
  CHECK(std::signbit(v[5]));  // -0.0 keeps its sign
  CHECK(a.data.size() == 24);
}

TEST_CASE("read_npy: every supported dtype", "[io][npy]") {
  SECTION("<f8") {
    const NpyArray a = torchtpu::read_npy(fixture("f8_3.npy"));
    CHECK(a.dtype == ScalarType::Double);
    CHECK(a.shape == std::vector<int64_t>{3});
    CHECK(to_vector(a.values<double>()) == std::vector<double>{0.1, -1e300, 2.5});
  }
  SECTION("<i8") {
    const NpyArray a = torchtpu::read_npy(fixture("i8_2x2.npy"));
    CHECK(a.dtype == ScalarType::Int64);
    CHECK(a.shape == std::vector<int64_t>{2, 2});
    CHECK(to_vector(a.values<int64_t>()) == std::vector<int64_t>{1, -2, int64_t{1} << 40, -9});
  }
  SECTION("<i4") {
    const NpyArray a = torchtpu::read_npy(fixture("i4_4.npy"));
    CHECK(a.dtype == ScalarType::Int32);
    CHECK(to_vector(a.values<int32_t>()) == std::vector<int32_t>{7, -8, 2147483647, -2147483647 - 1});
  }
  SECTION("|u1") {
    const NpyArray a = torchtpu::read_npy(fixture("u1_2x2.npy"));
    CHECK(a.dtype == ScalarType::UInt8);
    CHECK(a.shape == std::vector<int64_t>{2, 2});
    CHECK(to_vector(a.values<uint8_t>()) == std::vector<uint8_t>{0, 255, 17, 128});
  }
  SECTION("|b1") {
    const NpyArray a = torchtpu::read_npy(fixture("b1_3.npy"));
    CHECK(a.dtype == ScalarType::Bool);
    CHECK(to_vector(a.values<bool>()) == std::vector<bool>{true, false, true});
  }
  SECTION("<f2") {
    const NpyArray a = torchtpu::read_npy(fixture("f2_2.npy"));
    CHECK(a.dtype == ScalarType::Half);
    REQUIRE(a.data.size() == 4);
    // IEEE half: 1.0 = 0x3C00, -0.5 = 0xB800, little-endian bytes.
    CHECK(a.data[0] == std::byte{0x00});
    CHECK(a.data[1] == std::byte{0x3C});
    CHECK(a.data[2] == std::byte{0x00});
    CHECK(a.data[3] == std::byte{0xB8});
  }
}

TEST_CASE("read_npy: 0-d, empty, big-endian and version 2.0 files", "[io][npy]") {
  SECTION("0-d array") {
    const NpyArray a = torchtpu::read_npy(fixture("f4_scalar.npy"));
    CHECK(a.shape.empty());
    CHECK(a.numel() == 1);
    CHECK(to_vector(a.values<float>()) == std::vector<float>{3.25f});
  }
  SECTION("no elements") {
    const NpyArray a = torchtpu::read_npy(fixture("f4_0x3.npy"));
    CHECK(a.shape == std::vector<int64_t>{0, 3});
    CHECK(a.numel() == 0);
    CHECK(a.data.empty());
    CHECK(a.values<float>().empty());
  }
  SECTION(">f4 is byte-swapped to the host's order") {
    const NpyArray a = torchtpu::read_npy(fixture("f4_be_2.npy"));
    CHECK(a.dtype == ScalarType::Float);
    CHECK(to_vector(a.values<float>()) == std::vector<float>{1.0f, -2.0f});
  }
  SECTION("format version 2.0") {
    const NpyArray a = torchtpu::read_npy(fixture("f4_v2_2.npy"));
    CHECK(a.shape == std::vector<int64_t>{2});
    CHECK(to_vector(a.values<float>()) == std::vector<float>{0.5f, 8.0f});
  }
}

TEST_CASE("read_npy: errors", "[io][npy]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("f4_fortran_2x3.npy")), Contains("Fortran order"));
  CHECK_THROWS_AS(torchtpu::read_npy(fixture("f4_fortran_2x3.npy")), torchtpu::ValueError);
  CHECK_THROWS_AS(torchtpu::read_npy(fixture("i2_2.npy")), torchtpu::TypeError);
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("i2_2.npy")), Contains("'<i2'"));
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("structured.npy")), Contains("structured dtypes"));
  CHECK_THROWS_AS(torchtpu::read_npy(fixture("f4_truncated.npy")), torchtpu::ValueError);
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("f4_truncated.npy")), Contains("22 bytes") && Contains("needs 24"));
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("not_npy.bin")), Contains("not a .npy file"));
  CHECK_THROWS_AS(torchtpu::read_npy(fixture("no_such_file.npy")), torchtpu::Error);
  CHECK_THROWS_WITH(torchtpu::read_npy(fixture("no_such_file.npy")), Contains("no_such_file.npy") && Contains("cannot open"));

  // values<T>() never converts.
  const NpyArray a = torchtpu::read_npy(fixture("i8_2x2.npy"));
  CHECK_THROWS_AS(a.values<float>(), torchtpu::TypeError);
  CHECK_THROWS_WITH(a.values<double>(), Contains("int64") && Contains("float64"));
}

TEST_CASE("parse_npy: malformed headers", "[io][npy]") {
  using Catch::Matchers::Contains;
  // A version 1.0 file whose header dict is `dict`, followed by `data_bytes` zero bytes.
  auto make = [](const std::string& dict, size_t data_bytes, unsigned char major = 1) {
    std::vector<std::byte> f;
    for (unsigned char c : std::string("\x93NUMPY")) f.push_back(std::byte{c});
    f.push_back(std::byte{major});
    f.push_back(std::byte{0});
    f.push_back(std::byte{static_cast<unsigned char>(dict.size() & 0xff)});
    f.push_back(std::byte{static_cast<unsigned char>(dict.size() >> 8)});
    for (char c : dict) f.push_back(static_cast<std::byte>(c));
    f.insert(f.end(), data_bytes, std::byte{0});
    return f;
  };
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  CHECK(torchtpu::parse_npy(make(ok, 8)).shape == std::vector<int64_t>{2});
  CHECK_THROWS_WITH(torchtpu::parse_npy(make(ok, 12)), Contains("12 bytes") && Contains("needs 8"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make(ok, 8, 4)), Contains("version 4.0"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<f4', 'shape': (2,)}", 8)), Contains("fortran_order"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2,)}", 8)),
                    Contains("True or False"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}", 8)),
                    Contains("non-negative integer"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8)),
                    Contains("unknown header key 'x'"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<f4'", 0)), Contains("bad .npy header"));
  CHECK_THROWS_WITH(torchtpu::parse_npy(make("{'descr': '<q9', 'fortran_order': False, 'shape': ()}", 8)),
                    Contains("unsupported .npy dtype '<q9'"));
  CHECK_THROWS_WITH(
      torchtpu::parse_npy(make("{'descr': '<u1', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                               "99999999999)}", 0)),
      Contains("overflows"));
  // tests/fuzz/corpus/npy/repro_numel_overflow_zero_dim.npy: a 0 dimension made the byte count
  // 0, but numel() multiplied the other dimensions first and overflowed int64.
  CHECK_THROWS_WITH(
      torchtpu::parse_npy(make("{'descr': '<u1', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                               "0)}", 0)),
      Contains("element count overflows"));
  CHECK(torchtpu::parse_npy(make("{'descr': '<u1', 'fortran_order': False, 'shape': (99999999, 0, 99999999)}", 0))
            .numel() == 0);
  NpyArray wrapped;
  wrapped.shape = {int64_t{1} << 62, int64_t{1} << 62};
  CHECK_THROWS_AS(wrapped.numel(), torchtpu::ValueError);  // was 0: 2^124 wraps
  wrapped.shape = {(int64_t{1} << 62) + 1, 4};
  CHECK_THROWS_WITH(wrapped.numel(), Contains("overflows int64"));  // was 4
  // A bool byte other than 0 or 1 is rejected rather than turned into an invalid bool.
  std::vector<std::byte> bad_bool = make("{'descr': '|b1', 'fortran_order': False, 'shape': (1,)}", 1);
  bad_bool.back() = std::byte{2};
  CHECK_THROWS_WITH(torchtpu::parse_npy(bad_bool), Contains("bool element"));
  // The source name given to parse_npy starts each message.
  CHECK_THROWS_WITH(torchtpu::parse_npy(make(ok, 4), "weights.npy"), Contains("weights.npy:"));
}

TEST_CASE("to_npy_bytes matches NumPy's own bytes", "[io][npy]") {
  const std::vector<float> v = {1.5f, -2.0f, 0.25f, 3.0f, 0.004f, -0.0f};
  const std::vector<int64_t> shape = {2, 3};
  const auto bytes = torchtpu::to_npy_bytes(ScalarType::Float, shape, std::as_bytes(std::span(v)));
  CHECK(bytes == file_bytes(fixture("f4_2x3.npy")));

  const std::vector<int64_t> i = {1, -2, int64_t{1} << 40, -9};
  CHECK(torchtpu::to_npy_bytes(ScalarType::Int64, std::vector<int64_t>{2, 2}, std::as_bytes(std::span(i))) ==
        file_bytes(fixture("i8_2x2.npy")));
  const float s = 3.25f;
  CHECK(torchtpu::to_npy_bytes(ScalarType::Float, {}, std::as_bytes(std::span(&s, 1))) ==
        file_bytes(fixture("f4_scalar.npy")));
  const bool b[] = {true, false, true};
  CHECK(torchtpu::to_npy_bytes(ScalarType::Bool, std::vector<int64_t>{3}, std::as_bytes(std::span(b))) ==
        file_bytes(fixture("b1_3.npy")));
}

TEST_CASE("write_npy then read_npy round-trips", "[io][npy]") {
  const std::string path = "test_npy_roundtrip.npy";  // in the build directory
  SECTION("typed values") {
    // example-begin npy-write
    const std::vector<double> logits = {0.5, -1.25, 3.0, 1e-7, 2.0, -0.0};
    const std::vector<int64_t> shape = {3, 2};
    torchtpu::write_npy<double>(path, shape, logits);
    // example-end npy-write
    const NpyArray a = torchtpu::read_npy(path);
    CHECK(a.dtype == ScalarType::Double);
    CHECK(a.shape == shape);
    CHECK(to_vector(a.values<double>()) == logits);
  }
  SECTION("an NpyArray with no elements") {
    NpyArray e;
    e.dtype = ScalarType::Int32;
    e.shape = {4, 0};
    torchtpu::write_npy(path, e);
    const NpyArray a = torchtpu::read_npy(path);
    CHECK(a.dtype == ScalarType::Int32);
    CHECK(a.shape == std::vector<int64_t>{4, 0});
    CHECK(a.data.empty());
  }
  SECTION("a header longer than 65,535 bytes uses format 2.0") {
    const std::vector<int64_t> shape(25000, 1);  // "1, " per axis: a header of about 75 KB
    const uint8_t one = 7;
    torchtpu::write_npy(path, ScalarType::UInt8, shape, std::as_bytes(std::span(&one, 1)));
    const auto bytes = file_bytes(path);
    CHECK(bytes[6] == std::byte{2});
    CHECK(bytes.size() % 64 == 1);  // header padded to 64, then one data byte
    const NpyArray a = torchtpu::read_npy(path);
    CHECK(a.shape.size() == 25000);
    CHECK(to_vector(a.values<uint8_t>()) == std::vector<uint8_t>{7});
  }
  std::remove(path.c_str());
}

TEST_CASE("write_npy: errors", "[io][npy]") {
  const std::vector<float> v = {1.0f, 2.0f, 3.0f};
  CHECK_THROWS_AS(torchtpu::to_npy_bytes(ScalarType::Float, std::vector<int64_t>{2, 2}, std::as_bytes(std::span(v))),
                  torchtpu::ValueError);
  CHECK_THROWS_AS(torchtpu::to_npy_bytes(ScalarType::Float, std::vector<int64_t>{-3}, std::as_bytes(std::span(v))),
                  torchtpu::ValueError);
  CHECK_THROWS_AS(torchtpu::to_npy_bytes(ScalarType::BFloat16, std::vector<int64_t>{0}, {}), torchtpu::TypeError);
  CHECK_THROWS_AS(torchtpu::write_npy<float>("/nonexistent-dir/x.npy", std::vector<int64_t>{3}, v), torchtpu::Error);
}
