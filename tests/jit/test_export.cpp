// tests/jit/test_export.cpp — torch.export programs (.pt2) through jit::load_exported, without
// libtorch or torch 2.x: the small archives in tests/data/export (written by torch 2.14,
// tests/jit/make_export_fixtures.py) against torch's float64 outputs, unsupported ops reported
// before anything runs, and damaged archives refused with ValueError.
#include <catch2/catch.hpp>  // TEST_CASE, REQUIRE, CHECK, CHECK_THROWS_AS

#include <algorithm>   // std::search
#include <cstddef>     // size_t, ptrdiff_t
#include <cstdint>     // int64_t
#include <filesystem>  // std::filesystem::temp_directory_path
#include <fstream>     // std::ifstream, std::ofstream
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string
#include <vector>      // std::vector

#include <torchtpu/io/npy.hpp>        // read_npy
#include <torchtpu/jit/export.hpp>    // load_exported, is_exported_archive

#include "compare.hpp"     // jit_test::max_rel
#include "npy_tensor.hpp"  // jit_test::npy_tensor

namespace {

using torchtpu::jit::FloatTensor;
using torchtpu::jit::Mode;
using torchtpu::jit::Value;

const std::string dir = TORCHTPU_EXPORT_DATA;

/// A float64 .npy reference as float32 (the comparison's tolerance is far above the rounding).
FloatTensor expected(const std::string& path) {
  const torchtpu::NpyArray a = torchtpu::read_npy(path);
  REQUIRE(a.dtype == torchtpu::ScalarType::Double);
  const auto v = a.values<double>();
  std::vector<float> f(v.begin(), v.end());
  return torchtpu::from_data(f.data(), torchtpu::Dims(a.shape.begin(), a.shape.end()));
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string write_temp(const std::string& name, const std::vector<char>& b) {
  const std::string p = (std::filesystem::temp_directory_path() / ("torchtpu_test_export_" + name)).string();
  std::ofstream(p, std::ios::binary).write(b.data(), std::streamsize(b.size()));
  return p;
}

/// The offset of the first data byte of the stored zip entry whose name ends in `name` (its local
/// header is the name's first occurrence: torch writes every entry's header before the central
/// directory), read from the header's name and extra-field lengths (torch pads with extra fields).
size_t entry_data(const std::vector<char>& b, const std::string& name) {
  const auto at = std::search(b.begin(), b.end(), name.begin(), name.end());
  REQUIRE(at != b.end());
  const size_t end = size_t(at - b.begin()) + name.size();
  // the header is 30 bytes before the full name; the name may have a folder prefix before `name`
  size_t h = size_t(at - b.begin());
  while (h >= 30 && !(b[h - 30] == 'P' && b[h - 29] == 'K' && b[h - 28] == 3 && b[h - 27] == 4)) --h;
  REQUIRE(h >= 30);
  const size_t header = h - 30;
  const size_t full_name = size_t(static_cast<unsigned char>(b[header + 26])) | size_t(static_cast<unsigned char>(b[header + 27])) << 8;
  const size_t extra = size_t(static_cast<unsigned char>(b[header + 28])) | size_t(static_cast<unsigned char>(b[header + 29])) << 8;
  REQUIRE(header + 30 + full_name == end);
  return end + extra;
}

/// The message of the ValueError `f` throws ("" when it throws none).
template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const torchtpu::ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("load_exported: linear, relu, split, unflatten and mean match torch (two outputs)", "[export]") {
  // example-begin load-exported
  const torchtpu::jit::ExportedModule m = torchtpu::jit::load_exported(dir + "/mlp.pt2");
  const FloatTensor x = jit_test::npy_tensor(dir + "/mlp.input.npy");
  const std::vector<Value> out = m.forward({Value(x)});
  // example-end load-exported
  REQUIRE(m.input_names() == std::vector<std::string>{"x"});
  for (Mode mode : {Mode::Debug, Mode::Strict, Mode::Fused}) {
    const std::vector<Value> o = m.forward({Value(x)}, mode);
    REQUIRE(o.size() == 2);
    CHECK(o[0].tensor().sizes() == torchtpu::Dims{2, 3, 1});
    CHECK(jit_test::max_rel(o[0].tensor(), expected(dir + "/mlp.expected0.npy")) <= 1e-5);
    CHECK(jit_test::max_rel(o[1].tensor(), expected(dir + "/mlp.expected1.npy")) <= 1e-5);
  }
  CHECK(out.size() == 2);
}

TEST_CASE("load_exported: conv, batch norm, relu, pools, flatten and linear match torch", "[export]") {
  const auto m = torchtpu::jit::load_exported(dir + "/conv_bn.pt2");
  const FloatTensor x = jit_test::npy_tensor(dir + "/conv_bn.input.npy");
  const FloatTensor want = expected(dir + "/conv_bn.expected0.npy");
  for (Mode mode : {Mode::Debug, Mode::Strict, Mode::Fused}) CHECK(jit_test::max_rel(m.forward(x, mode), want) <= 1e-5);
  // the weights are constants of the graph: a second run gives the same answer
  CHECK(jit_test::max_rel(m.forward(x), want) <= 1e-5);
  CHECK_THROWS_AS(m.forward(std::vector<Value>{}), torchtpu::ValueError);  // wrong input count
}

TEST_CASE("load_exported: unsupported ops are listed with count and location before anything runs", "[export]") {
  std::string msg;
  try {
    (void)torchtpu::jit::load_exported(dir + "/unsupported.pt2");
  } catch (const torchtpu::UnsupportedOperator& e) {
    msg = e.what();
  }
  CHECK(msg.find("aten::erfinv x2, first at node 0 'erfinv'") != std::string::npos);
  CHECK(msg.find("aten::softmax x1") != std::string::npos);  // a float64 softmax dtype: refused
  CHECK(msg.find("make_export_fixtures.py:") != std::string::npos);
}

TEST_CASE("load_exported: missing, foreign and damaged files give ValueError naming file and entry", "[export]") {
  const std::string good = dir + "/conv_bn.pt2";
  CHECK(torchtpu::jit::is_exported_archive(good));
  CHECK_FALSE(torchtpu::jit::is_exported_archive(dir + "/conv_bn.input.npy"));
  CHECK_FALSE(torchtpu::jit::is_exported_archive(dir + "/no_such.pt2"));

  CHECK(value_error([&] { (void)torchtpu::jit::load_exported(dir + "/no_such.pt2"); }).find("no such file") !=
        std::string::npos);
  CHECK(value_error([&] { (void)torchtpu::jit::load_exported(dir + "/conv_bn.input.npy"); })
            .find("not a readable zip archive") != std::string::npos);

  const std::vector<char> b = bytes_of(good);
  REQUIRE(b.size() > 1000);
  // cut short: every prefix length loses the zip directory or an entry; none may crash
  for (size_t keep : {size_t(0), size_t(4), size_t(100), b.size() / 2, b.size() - 30, b.size() - 1}) {
    const std::string p = write_temp("cut.pt2", std::vector<char>(b.begin(), b.begin() + std::ptrdiff_t(keep)));
    INFO("kept " << keep << " of " << b.size() << " bytes");
    CHECK_FALSE(value_error([&] { (void)torchtpu::jit::load_exported(p); }).empty());
    CHECK_FALSE(torchtpu::jit::is_exported_archive(p));
  }
  // one byte flipped inside models/model.json, and inside the first weight's bytes: CRC-32
  for (const std::string entry : {"models/model.json", "data/weights/weight_0"}) {
    std::vector<char> flipped = b;
    flipped[entry_data(b, entry) + 3] ^= 0x20;
    const std::string p = write_temp("flipped.pt2", flipped);
    const std::string msg = value_error([&] { (void)torchtpu::jit::load_exported(p); });
    INFO(msg);
    CHECK(msg.find(p) != std::string::npos);
    CHECK(msg.find(entry) != std::string::npos);
    CHECK(msg.find("CRC-32") != std::string::npos);
  }
}
