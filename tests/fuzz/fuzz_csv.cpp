// tests/fuzz/fuzz_csv.cpp — libFuzzer harness for the numeric CSV reader (torchtpu/io/csv.hpp).
// Any input must either parse or throw a torchtpu Error (ValueError); a parsed table must keep
// its documented shape invariants, and `at` must accept exactly the in-range indices.
#include <cstddef>      // size_t
#include <cstdint>      // uint8_t, int64_t
#include <string_view>  // std::string_view

#include <torchtpu/io/csv.hpp>  // parse_csv, CsvTable

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchtpu;
  CsvTable t;
  try {
    t = parse_csv(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const Error&) {
    return 0;
  }
  if (t.rows < 0 || t.cols < 1 || static_cast<int64_t>(t.header.size()) != t.cols ||
      static_cast<int64_t>(t.values.size()) != t.rows * t.cols)
    __builtin_trap();
  if (t.rows > 0) (void)t.at(t.rows - 1, t.cols - 1);
  try {
    (void)t.at(t.rows, 0);
    __builtin_trap();
  } catch (const IndexError&) {
  }
  if (t.column(t.header[0]) != 0 && t.header[0] != t.header[static_cast<size_t>(t.column(t.header[0]))])
    __builtin_trap();
  return 0;
}
