// Tests of torchtpu/io/csv.hpp: a small fixture, in-memory text, error messages with line
// numbers, and the real data/digits_test.csv.
#include <catch2/catch.hpp>  // TEST_CASE, CHECK, CHECK_THROWS_AS, Catch::Matchers

#include <cmath>    // std::isnan, std::isinf, std::floor, std::signbit
#include <cstdint>  // int64_t
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include <torchtpu/io/csv.hpp>  // read_csv, parse_csv, CsvTable
#include <torchtpu/io/npy.hpp>  // read_npy (the preprocessed copy of the digits)

#ifndef TORCHTPU_IO_FIXTURES
#error "TORCHTPU_IO_FIXTURES must name the tests/io/fixtures directory"
#endif
#ifndef TORCHTPU_DATA_DIR
#error "TORCHTPU_DATA_DIR must name the repository's data/ directory"
#endif

using Catch::Matchers::Contains;

TEST_CASE("read_csv: header, spaces, quotes, blank line, CRLF", "[io][csv]") {
  // example-begin csv-read
  const torchtpu::CsvTable t = torchtpu::read_csv(std::string(TORCHTPU_IO_FIXTURES) + "/small.csv");
  CHECK(t.header == std::vector<std::string>{"a", "b", "c"});
  CHECK(t.rows == 2);
  CHECK(t.cols == 3);
  CHECK(t.at(1, 0) == 400.0);  // row 1 (the second data row), column "a"
  CHECK(t.column("c") == 2);
  // example-end csv-read
  REQUIRE(t.values.size() == 6);
  CHECK(t.values[0] == 1.0);
  CHECK(t.values[1] == 2.5);
  CHECK(t.values[2] == -3.0);
  CHECK(t.values[3] == 400.0);
  CHECK(t.values[4] == 5.0);
  CHECK(std::isnan(t.values[5]));
}

TEST_CASE("parse_csv: accepted forms", "[io][csv]") {
  SECTION("header only: no rows") {
    const auto t = torchtpu::parse_csv("x,y\n");
    CHECK(t.rows == 0);
    CHECK(t.cols == 2);
    CHECK(t.values.empty());
  }
  SECTION("no final newline, scientific notation, signs, inf") {
    const auto t = torchtpu::parse_csv("v,w\n-1.5e-3,+2E2\n-inf,0\n3,.5");
    CHECK(t.rows == 3);
    CHECK(t.at(0, 0) == -1.5e-3);
    CHECK(t.at(0, 1) == 200.0);
    CHECK(std::isinf(t.at(1, 0)));
    CHECK(t.at(1, 0) < 0);
    CHECK(t.at(2, 1) == 0.5);
  }
  SECTION("UTF-8 byte-order mark and a quoted name holding a comma and a quote") {
    const auto t = torchtpu::parse_csv("\xEF\xBB\xBFid,\"x, \"\"y\"\"\"\n1,2\n");
    CHECK(t.header == std::vector<std::string>{"id", "x, \"y\""});
    CHECK(t.at(0, 1) == 2.0);
  }
  SECTION("leading blank lines before the header") {
    const auto t = torchtpu::parse_csv("\n  \r\nq\n7\n");
    CHECK(t.header == std::vector<std::string>{"q"});
    CHECK(t.at(0, 0) == 7.0);
  }
}

TEST_CASE("parse_csv: errors name the line and column", "[io][csv]") {
  CHECK_THROWS_AS(torchtpu::parse_csv(""), torchtpu::ValueError);
  CHECK_THROWS_WITH(torchtpu::parse_csv("\n\n", "empty.csv"), Contains("empty.csv") && Contains("no header row"));
  // Line numbers count every line of the file, blank ones and the header included.
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1,2\n\n3\n", "d.csv"),
                    Contains("d.csv:4") && Contains("expected 2 fields") && Contains("found 1"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1,2,3\n", "d.csv"), Contains("d.csv:2") && Contains("found 3"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1,2\n1,x7\n", "d.csv"),
                    Contains("d.csv:3, column 2 ('b')") && Contains("not a number: 'x7'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1,\n", "d.csv"), Contains("d.csv:2, column 2") && Contains("empty field"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1.5.2,3\n"), Contains("not a number: '1.5.2'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a\n+-1\n"), Contains("not a number: '+-1'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a\n+\n"), Contains("not a number: '+'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a\n1 2\n"), Contains("not a number: '1 2'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("\"a,b\n1\n", "q.csv"), Contains("q.csv:1") && Contains("unterminated"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("\"a\"x,b\n", "q.csv"), Contains("after the closing quote"));
  CHECK_THROWS_AS(torchtpu::read_csv(std::string(TORCHTPU_IO_FIXTURES) + "/missing.csv"), torchtpu::Error);
  CHECK_THROWS_WITH(torchtpu::read_csv(std::string(TORCHTPU_IO_FIXTURES) + "/missing.csv"),
                    Contains("missing.csv") && Contains("cannot open"));

  const auto t = torchtpu::parse_csv("a\n1\n");
  CHECK_THROWS_AS(t.at(1, 0), torchtpu::IndexError);
  CHECK_THROWS_AS(t.at(0, -1), torchtpu::IndexError);
  CHECK_THROWS_AS(t.column("zz"), torchtpu::IndexError);
}

TEST_CASE("read_csv: data/digits_test.csv", "[io][csv]") {
  const auto t = torchtpu::read_csv(std::string(TORCHTPU_DATA_DIR) + "/digits_test.csv");
  CHECK(t.rows == 360);
  CHECK(t.cols == 65);
  CHECK(t.header.front() == "p0");
  CHECK(t.header[63] == "p63");
  CHECK(t.column("label") == 64);
  // The first test image: its first row of pixels is 0 0 2 13 16 9 0 0.
  CHECK(t.at(0, 2) == 2.0);
  CHECK(t.at(0, 3) == 13.0);
  CHECK(t.at(0, 4) == 16.0);
  int64_t per_label[10] = {};
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < 64; ++c) {
      const double v = t.at(r, c);
      REQUIRE((v >= 0.0 && v <= 16.0 && v == std::floor(v)));
    }
    const double label = t.at(r, 64);
    REQUIRE((label >= 0.0 && label <= 9.0 && label == std::floor(label)));
    ++per_label[static_cast<int>(label)];
  }
  // Stratified split: the digits' class sizes scaled to 360 samples.
  const std::vector<int64_t> counts(per_label, per_label + 10);
  CHECK(counts == std::vector<int64_t>{36, 36, 35, 37, 36, 37, 36, 36, 35, 36});
  CHECK(t.at(0, 64) == 7.0);  // the first test image is a 7
}

TEST_CASE("digits: CSV pixels / 16 as float32 equal data/digits_test_x.npy exactly", "[io][csv][npy]") {
  // The preprocessing data/README.md documents, applied on the C++ side.
  const auto t = torchtpu::read_csv(std::string(TORCHTPU_DATA_DIR) + "/digits_test.csv");
  const auto x = torchtpu::read_npy(std::string(TORCHTPU_DATA_DIR) + "/digits_test_x.npy");
  const auto y = torchtpu::read_npy(std::string(TORCHTPU_DATA_DIR) + "/digits_test_y.npy");
  REQUIRE(x.shape == std::vector<int64_t>{360, 64});
  REQUIRE(y.shape == std::vector<int64_t>{360});
  const auto xv = x.values<float>();
  const auto yv = y.values<int64_t>();
  int64_t mismatches = 0;
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < 64; ++c)
      if (static_cast<float>(t.at(r, c) / 16.0) != xv[static_cast<size_t>(r * 64 + c)]) ++mismatches;
    if (static_cast<int64_t>(t.at(r, 64)) != yv[static_cast<size_t>(r)]) ++mismatches;
  }
  CHECK(mismatches == 0);
}

// Issue 18 item 15: numbers beyond double's range read as Python's float() reads them, and
// quoted fields may hold line ends (RFC 4180). Expected values are Python 3's:
// float('1e400') == inf, float('-1e-400') == -0.0, float('2e-324') == 0.0, ...
TEST_CASE("parse_csv: out-of-range numbers as Python's float()", "[io][csv]") {
  const double inf = std::numeric_limits<double>::infinity();
  const auto t = torchtpu::parse_csv(
      "v\n1e400\n-1e400\n1e-400\n-1e-400\n+1e400\n1.7976931348623159e308\n2e-324\n3e-324\n"
      "0.000000001e400\n1000e-327\n00012e308\n1e99999999999999999999999\n-1e-99999999999999999999999\n1e-310\n");
  REQUIRE(t.rows == 14);
  CHECK(t.at(0, 0) == inf);
  CHECK(t.at(1, 0) == -inf);
  CHECK(t.at(2, 0) == 0.0);
  CHECK_FALSE(std::signbit(t.at(2, 0)));
  CHECK(t.at(3, 0) == 0.0);
  CHECK(std::signbit(t.at(3, 0)));
  CHECK(t.at(4, 0) == inf);
  CHECK(t.at(5, 0) == inf);
  CHECK(t.at(6, 0) == 0.0);
  CHECK(t.at(7, 0) == std::numeric_limits<double>::denorm_min());  // 5e-324
  CHECK(t.at(8, 0) == inf);
  CHECK(t.at(9, 0) == 0.0);
  CHECK(t.at(10, 0) == inf);
  CHECK(t.at(11, 0) == inf);
  CHECK(t.at(12, 0) == 0.0);
  CHECK(std::signbit(t.at(12, 0)));
  CHECK(t.at(13, 0) == 1e-310);
  // still not numbers
  CHECK_THROWS_WITH(torchtpu::parse_csv("a\n1e400x\n"), Contains("not a number: '1e400x'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a\n1e\n"), Contains("not a number: '1e'"));
}

TEST_CASE("parse_csv: quoted fields holding line ends (RFC 4180)", "[io][csv]") {
  const auto t = torchtpu::parse_csv("\"first\nname\",\"say \"\"hi\"\"\r\nthere\",c\r\n1,\"2\",3\n\"4\",5,6\n");
  CHECK(t.header == std::vector<std::string>{"first\nname", "say \"hi\"\r\nthere", "c"});
  REQUIRE(t.rows == 2);
  CHECK(t.values == std::vector<double>{1, 2, 3, 4, 5, 6});
  // line numbers in errors still count the file's lines: the header spans lines 1-3
  CHECK_THROWS_WITH(torchtpu::parse_csv("\"a\nb\",\"c\n\nd\"\n1,2\n1,z\n", "m.csv"),
                    Contains("m.csv:6, column 2 ('c\n\nd')") && Contains("not a number: 'z'"));
  CHECK_THROWS_WITH(torchtpu::parse_csv("a,b\n1,\"2\n", "m.csv"), Contains("m.csv:2") && Contains("unterminated"));
}
