// src/device/emulator.hpp — shared types of the TPU emulator plugin: element types, host
// tensors, the parsed StableHLO program, and the parser / interpreter entry points.
#pragma once
#include <cstdint>     // int64_t
#include <map>         // std::map
#include <memory>      // std::shared_ptr
#include <stdexcept>   // std::exception
#include <string>      // std::string
#include <utility>     // std::pair
#include <vector>      // std::vector

namespace torchtpu::emulator {

/// PJRT error codes the emulator reports (same numbers as PJRT_Error_Code).
enum ErrorCode : int {
  kInvalidArgument = 3, kNotFound = 5, kResourceExhausted = 8, kFailedPrecondition = 9, kUnimplemented = 12,
  kInternal = 13
};

/// An error that becomes a PJRT_Error at the C ABI boundary.
struct EmuError : std::exception {
  EmuError(int c, std::string m) : code(c), msg(std::move(m)) {}
  const char* what() const noexcept override { return msg.c_str(); }
  int code;
  std::string msg;
};

/// Element types the emulator knows (the MLIR spelling is in `et_name`).
enum class ET { PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64 };

const char* et_name(ET t);
bool et_is_float(ET t);
bool et_is_unsigned(ET t);  // PRED counts as unsigned
int et_bytes(ET t);
/// Rounds/wraps a double to the set of values of `t` (f32: nearest float, bf16: via f32,
/// ints: two's-complement wrap, pred: != 0).
double et_round(ET t, double v);

struct TensorType {
  ET et = ET::F32;
  std::vector<int64_t> dims;
  /// Product of `dims`. **Errors:** EmuError (INVALID_ARGUMENT) naming the type when the
  /// element count, or its size as stored (8 bytes per element), overflows int64.
  int64_t numel() const {
    for (int64_t d : dims)
      if (d == 0) return 0;
    int64_t n = 1, bytes = 0;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) overflow();
    if (__builtin_mul_overflow(n, int64_t{8}, &bytes)) overflow();
    return n;
  }
  bool operator==(const TensorType&) const = default;
  std::string str() const;

 private:
  [[noreturn]] void overflow() const {
    throw EmuError(kInvalidArgument, "TPU emulator: the size of " + str() + " overflows int64");
  }
};

/// A host tensor: every element stored as a double already rounded to `type.et`.
struct Tensor {
  TensorType type;
  std::vector<double> data;
};
using TensorPtr = std::shared_ptr<const Tensor>;

struct NamedAttr;

/// A parsed attribute value (generic or pretty syntax normalised to one tree).
struct Attr {
  enum Kind { Int, Float, Bool, Word, Str, List, Dict, Dense, Enum, Conv } kind = Word;
  int64_t i = 0;
  double f = 0;
  std::string s;                                 // Word/Str text, Enum value, Dense hex text
  std::vector<Attr> items;                       // List, Dense (nested), Conv (3 label lists)
  std::vector<NamedAttr> dict;                   // Dict
  TensorType type;                               // Dense: its tensor type
  const Attr* get(const std::string& key) const;
};

/// One `key = value` entry of a dictionary attribute.
struct NamedAttr {
  std::string first;
  Attr second;
};

inline const Attr* Attr::get(const std::string& key) const {
  for (const auto& kv : dict)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

struct Body;

/// One operation of @main.
struct Op {
  std::string name;                 // e.g. "stablehlo.add", "chlo.erf"
  std::vector<int> operands;        // value slots
  std::vector<int> results;         // value slots
  std::vector<TensorType> result_types;
  std::map<std::string, Attr> attrs;
  std::string reducer;              // reduce / reduce_window body: "stablehlo.add", ...
  std::shared_ptr<const Body> body; // stablehlo.sort: its comparator; null otherwise
  int line = 0;
};

/// A region of scalar ops (stablehlo.sort's comparator), with slots of its own: block argument k
/// is slot k, and its ops' results follow. Checked by detail::plan_sort (kernels.hpp).
struct Body {
  std::vector<TensorType> arg_types;  // the block arguments, in order
  std::vector<Op> ops;                // in order
  int result = -1;                    // the slot `stablehlo.return` returns
  int num_slots = 0;
  int line = 0;                       // the region's opening line
};

struct Schedule;  // fusion.hpp

/// A parsed function; the root one is @main and also holds the functions @main calls.
struct Program {
  std::vector<TensorType> params;
  std::vector<int> param_slots;
  std::vector<TensorType> results;
  std::vector<int> result_slots;
  std::vector<Op> ops;
  int num_slots = 0;
  std::map<std::string, std::shared_ptr<const Program>> functions;  // root only: "@name" → body
  std::shared_ptr<const Schedule> schedule;  // set by plan_fusion; null: planned at each run
};

/// Plans how function `p` runs: which elementwise ops are evaluated together block by block
/// (loop fusion) and which run alone (fusion.cpp). Called by the parser for every function.
void plan_fusion(Program& p);

/// Parses StableHLO text; throws EmuError (INVALID_ARGUMENT for malformed text, UNIMPLEMENTED
/// for ops or forms the emulator lacks), naming the op and line.
std::shared_ptr<const Program> parse_program(const std::string& text);

/// Runs `p` on `args` (checked against the parameter types). Throws EmuError.
std::vector<TensorPtr> run_program(const Program& p, const std::vector<TensorPtr>& args);
/// Runs function `f` of module `root` (calls resolve through `root.functions`).
std::vector<TensorPtr> run_function(const Program& root, const Program& f, const std::vector<TensorPtr>& args);

}  // namespace torchtpu::emulator
