// tests/errors/test_errors_io.cpp — bad inputs to the .npy and CSV readers and writers
// (docs/errors.md, section "I/O"). Files come from tests/io/fixtures (TORCHTPU_IO_FIXTURES);
// headers are also built in memory, so each row says exactly which byte is wrong.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE_THROWS_MATCHES

#include <cmath>    // HUGE_VAL
#include <cstddef>  // std::byte
#include <cstdint>  // int64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/io/csv.hpp>  // read_csv, parse_csv
#include <torchtpu/io/npy.hpp>  // read_npy, parse_npy, write_npy

#include "error_matchers.hpp"  // terr::has_message

using namespace torchtpu;
using terr::has_message;

namespace {
const std::string fixtures = TORCHTPU_IO_FIXTURES;

/// A version-1.0 .npy file with header dict `dict` (padded with spaces) and `data` bytes.
std::vector<std::byte> npy_bytes(const std::string& dict, size_t data_bytes) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string f = "\x93NUMPY";
  f += '\x01';
  f += '\x00';
  f += char(h.size() & 0xff);
  f += char(h.size() >> 8);
  f += h;
  f += std::string(data_bytes, '\0');
  std::vector<std::byte> out(f.size());
  for (size_t i = 0; i < f.size(); ++i) out[i] = std::byte(static_cast<unsigned char>(f[i]));
  return out;
}
std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = std::byte(static_cast<unsigned char>(s[i]));
  return out;
}
}  // namespace

TEST_CASE("errors/npy: files that are missing, not .npy, or damaged", "[errors]") {
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/no_such_file.npy"), Error,
                         has_message({"no_such_file.npy", "cannot open for reading", "No such file"}));
  REQUIRE_THROWS_MATCHES(read_npy(fixtures), Error, has_message({"read error"}));  // a directory
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/not_npy.bin"), ValueError, has_message({"not_npy.bin", "not a .npy file"}));
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/f4_truncated.npy"), ValueError,
                         has_message({"f4_truncated.npy", "data section has", "bytes, but shape"}));
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/f4_fortran_2x3.npy"), ValueError, has_message({"Fortran order"}));
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/i2_2.npy"), TypeError, has_message({"unsupported .npy dtype '<i2'", "supported:"}));
  REQUIRE_THROWS_MATCHES(read_npy(fixtures + "/structured.npy"), Error, has_message({"structured.npy"}));
}

TEST_CASE("errors/npy: bad headers in memory", "[errors]") {
  REQUIRE_THROWS_MATCHES(parse_npy(bytes_of("\x93NUMP")), ValueError, has_message({"<memory>", "not a .npy file"}));
  std::vector<std::byte> v9 = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  v9[6] = std::byte(9);
  REQUIRE_THROWS_MATCHES(parse_npy(v9), ValueError, has_message({"unsupported .npy format version 9.0"}));
  std::vector<std::byte> cut = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4);
  cut.resize(20);
  REQUIRE_THROWS_MATCHES(parse_npy(cut), ValueError, has_message({"truncated .npy header"}));
  REQUIRE_THROWS_MATCHES(parse_npy(npy_bytes("{'descr': '<f4', 'shape': (1,), }", 4)), ValueError,
                         has_message({"bad .npy header", "lacks 'fortran_order'"}));
  REQUIRE_THROWS_MATCHES(parse_npy(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8)),
                         TypeError, has_message({"unsupported .npy dtype '<c8'"}));
  REQUIRE_THROWS_MATCHES(parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 0)),
                         ValueError, has_message({"bad .npy header", "non-negative integer in 'shape'", "(-2,)"}));
  REQUIRE_THROWS_MATCHES(
      parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0)),
      ValueError, has_message({"overflows int64"}));
  REQUIRE_THROWS_MATCHES(parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8)),
                         ValueError, has_message({"data section has 8 bytes", "shape [3] of float32 needs 12"}));
  std::vector<std::byte> b = npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2);
  b.back() = std::byte(7);
  REQUIRE_THROWS_MATCHES(parse_npy(b), ValueError, has_message({"bool element holds the byte 7"}));
}

TEST_CASE("errors/npy: wrong dtype on access, writes that cannot happen", "[errors]") {
  const NpyArray a = read_npy(fixtures + "/f4_2x3.npy");
  REQUIRE_THROWS_MATCHES(a.values<int64_t>(), TypeError, has_message({"holds float32", "not int64"}));
  CHECK(a.values<float>().size() == 6);
  const float two[2] = {1, 2};
  const int64_t shape3[1] = {3};
  REQUIRE_THROWS_MATCHES(write_npy<float>("/nonexistent_dir/x.npy", std::span<const int64_t>(shape3, 1),
                                          std::span<const float>(two, 2)),
                         ValueError, has_message({"write_npy", "8 bytes of data", "shape [3] of float32 needs 12"}));
  const int64_t shape2[1] = {2};
  REQUIRE_THROWS_MATCHES(write_npy<float>("/nonexistent_dir/x.npy", std::span<const int64_t>(shape2, 1),
                                          std::span<const float>(two, 2)),
                         Error, has_message({"/nonexistent_dir/x.npy", "cannot open for writing"}));
  const bfloat16 h[1] = {bfloat16(1.0f)};
  const int64_t shape1[1] = {1};
  REQUIRE_THROWS_MATCHES(write_npy<bfloat16>("x.npy", std::span<const int64_t>(shape1, 1), std::span<const bfloat16>(h, 1)),
                         TypeError, has_message({"write_npy", "NumPy has no bfloat16"}));
}

TEST_CASE("errors/csv: missing files, empty text, ragged rows, non-numbers", "[errors]") {
  REQUIRE_THROWS_MATCHES(read_csv(fixtures + "/no_such.csv"), Error, has_message({"no_such.csv", "cannot open for reading"}));
  REQUIRE_THROWS_MATCHES(parse_csv(""), ValueError, has_message({"no header row"}));
  REQUIRE_THROWS_MATCHES(parse_csv("a,b\n1,2\n3\n"), ValueError, has_message({"<memory>:3", "expected 2 fields", "found 1"}));
  REQUIRE_THROWS_MATCHES(parse_csv("a,b\n1,x\n"), ValueError, has_message({"<memory>:2", "column 2 ('b')", "not a number: 'x'"}));
  REQUIRE_THROWS_MATCHES(parse_csv("a,b\n1,\n"), ValueError, has_message({"column 2", "empty field"}));
  REQUIRE_THROWS_MATCHES(parse_csv("a,b\n\"1,2\n"), ValueError, has_message({"unterminated quoted field"}));
  REQUIRE_THROWS_MATCHES(parse_csv("a,b\n\"1\"x,2\n"), ValueError, has_message({"after the closing quote"}));
  CHECK(parse_csv("a\n1e999\n").at(0, 0) == HUGE_VAL);  // out of double's range: inf, as Python's float()
  const CsvTable t = parse_csv("a,b\n1,2\n");
  REQUIRE_THROWS_MATCHES(t.at(1, 0), IndexError, has_message({"CsvTable::at(1, 0)", "1 x 2"}));
  REQUIRE_THROWS_MATCHES(t.column("c"), IndexError, has_message({"no column named 'c'"}));
  CHECK(t.at(0, 1) == 2.0);
}
