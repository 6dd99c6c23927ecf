// torchtpu/io/csv.hpp — reading numeric CSV files with a header row (such as
// data/digits_test.csv) into a rows × cols table of doubles.
#pragma once
#include <cctype>        // std::isdigit
#include <cerrno>        // errno
#include <charconv>      // std::from_chars
#include <cmath>         // HUGE_VAL
#include <cstddef>       // size_t
#include <cstdint>       // int64_t
#include <cstdio>        // std::FILE, std::fopen, std::fread, std::fclose
#include <cstring>       // std::strerror
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <system_error>  // std::errc
#include <utility>       // std::move
#include <vector>        // std::vector

#include "../core/errors.hpp"  // Error, ValueError, IndexError

namespace torchtpu {

/// A numeric table read from a CSV file: the header's column names and the values,
/// row-major.
///
/// **Shapes:** `values.size() == rows * cols`; `header.size() == cols`. `rows` may be 0.
/// **Example:** tests/io/test_csv.cpp, block `csv-read`.
struct CsvTable {
  /// Column names (empty when the file has no header row).
  std::vector<std::string> header;
  /// Number of data rows.
  int64_t rows = 0;
  /// Number of columns.
  int64_t cols = 0;
  /// The values, row-major (`rows * cols`).
  std::vector<double> values;

  /// The value at row `r`, column `c` (both from 0; the header is not a row).
  ///
  /// **Errors:** `IndexError` if either index is out of range.
  double at(int64_t r, int64_t c) const {
    if (r < 0 || r >= rows || c < 0 || c >= cols)
      throw IndexError("CsvTable::at(" + std::to_string(r) + ", " + std::to_string(c) + "): the table is " +
                       std::to_string(rows) + " x " + std::to_string(cols));
    return values[static_cast<size_t>(r * cols + c)];
  }

  /// The index of the column named `name` (the first, if the header repeats it).
  ///
  /// **Errors:** `IndexError` if no column has that name.
  int64_t column(std::string_view name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int64_t>(i);
    throw IndexError("CsvTable::column: no column named '" + std::string(name) + "'");
  }
};

namespace detail {

/// Reads one CSV record (RFC 4180) starting at `text[i]` into fields and moves `i` past it
/// and its line end: commas separate, surrounding spaces and tabs are dropped, a field may be
/// double-quoted (`""` inside quotes is one quote; a quoted field may hold commas and line
/// ends). A record ends at an unquoted `\n` or `\r\n`, or at the end of the text. `line` is
/// the 1-based number of the current line, advanced past each line end consumed. Throws
/// ValueError naming `where` (the record's first line) for an unterminated quote.
inline std::vector<std::string> csv_split(std::string_view text, size_t& i, int64_t& line, const std::string& where) {
  std::vector<std::string> fields;
  auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  auto at_record_end = [&] {
    return i >= text.size() || text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
  };
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    std::string field;
    if (i < text.size() && text[i] == '"') {
      ++i;
      while (true) {
        if (i >= text.size()) throw ValueError(where + ": unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field.push_back(text[i++]);
      }
      while (i < text.size() && is_space(text[i])) ++i;
      if (!at_record_end() && text[i] != ',')
        throw ValueError(where + ": unexpected text after the closing quote of field " +
                         std::to_string(fields.size() + 1));
    } else {
      const size_t start = i;
      while (!at_record_end() && text[i] != ',') ++i;
      size_t end = i;
      while (end > start && is_space(text[end - 1])) --end;
      field.assign(text.substr(start, end - start));
    }
    fields.push_back(std::move(field));
    if (at_record_end()) {
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    ++i;  // ','
  }
  return fields;
}

/// For a decimal number `text` that from_chars found out of range: true if its magnitude is
/// above the largest double (it overflows), false if below the smallest (it underflows).
inline bool csv_overflows(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  // the power of ten of the first nonzero digit, before the exponent part
  int64_t int_digits = 0, frac_digits = 0, first = -1;  // first: its index among the integer digits
  int64_t lead = 0;
  bool seen = false, point = false;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      point = true;
      continue;
    }
    if (point) ++frac_digits;
    else ++int_digits;
    if (!seen && text[i] != '0') {
      seen = true;
      if (point) lead = -frac_digits;
      else first = int_digits - 1;
    }
  }
  if (first >= 0) lead = int_digits - 1 - first;
  int64_t e = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    const bool neg = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
      if (e < (int64_t(1) << 40)) e = e * 10 + (text[i] - '0');
    if (neg) e = -e;
  }
  return lead + e >= 0;
}

/// Parses a whole field as a double as Python's `float()` does (decimal or scientific
/// notation, an optional sign, `nan`, `inf`): a number too large for a double is +-inf, one
/// too small is +-0.0. Returns false if any of the field is not part of the number.
inline bool csv_parse_double(std::string_view text, double& out) {
  if (!text.empty() && text.front() == '+') {  // from_chars takes '-' but not '+'
    text.remove_prefix(1);
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) return false;
  }
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (end != text.data() + text.size()) return false;
  if (ec == std::errc::result_out_of_range) {  // finite text beyond double's range
    const bool neg = text.front() == '-';
    out = csv_overflows(text) ? (neg ? -HUGE_VAL : HUGE_VAL) : (neg ? -0.0 : 0.0);
    return true;
  }
  return ec == std::errc();
}

}  // namespace detail

/// Parses CSV text whose first non-blank record is a header of column names and whose other
/// records are numbers, all with as many fields as the header. Blank lines are skipped;
/// `\n` and `\r\n` line ends, quoted fields holding line ends (RFC 4180) and a UTF-8
/// byte-order mark are accepted. Numbers are read as Python's `float()` reads them
/// (`1e400` is inf, `1e-400` is 0.0). `what`
/// names the source in error messages (a path, or "<memory>").
///
/// **Errors:** `ValueError` naming the source, the 1-based line number and, for a bad
/// value, the column number and name: no header row, a row with the wrong number of
/// fields, an empty field, text that is not a number, an unterminated quote.
/// **Example:** tests/io/test_csv.cpp, block `csv-read`.
inline CsvTable parse_csv(std::string_view text, std::string_view what = "<memory>") {
  const std::string w(what);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvTable t;
  bool have_header = false;
  size_t pos = 0;
  int64_t line_no = 1;
  while (pos < text.size()) {
    // a blank line (spaces and tabs only) is skipped
    size_t k = pos;
    while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
    if (k == text.size() || text[k] == '\n' || (text[k] == '\r' && (k + 1 == text.size() || text[k + 1] == '\n'))) {
      pos = k < text.size() && text[k] == '\r' ? k + 1 : k;
      if (pos < text.size()) ++pos;  // '\n'
      ++line_no;
      continue;
    }
    const std::string where = w + ":" + std::to_string(line_no);
    std::vector<std::string> fields = detail::csv_split(text, pos, line_no, where);
    if (!have_header) {
      t.header = std::move(fields);
      t.cols = static_cast<int64_t>(t.header.size());
      have_header = true;
      continue;
    }
    if (static_cast<int64_t>(fields.size()) != t.cols)
      throw ValueError(where + ": expected " + std::to_string(t.cols) + " fields (as in the header), found " +
                       std::to_string(fields.size()));
    for (size_t c = 0; c < fields.size(); ++c) {
      double v = 0;
      if (!detail::csv_parse_double(fields[c], v))
        throw ValueError(where + ", column " + std::to_string(c + 1) + " ('" + t.header[c] + "'): " +
                         (fields[c].empty() ? std::string("empty field") : "not a number: '" + fields[c] + "'"));
      t.values.push_back(v);
    }
    ++t.rows;
  }
  if (!have_header) throw ValueError(w + ": no header row (the CSV text is empty)");
  return t;
}

/// Reads a numeric CSV file with a header row; see `parse_csv` for the accepted format.
///
/// **Errors:** `Error` if the file cannot be opened or read (with the OS's reason); the
/// errors of `parse_csv`, whose messages start with `path:line`.
/// **Example:** tests/io/test_csv.cpp, block `csv-read`.
inline CsvTable read_csv(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open for reading: " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error(path + ": read error");
  return parse_csv(text, path);
}

}  // namespace torchtpu
