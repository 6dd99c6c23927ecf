// src/device/fusion.hpp — loop fusion in the TPU emulator: how a function runs (which ops run
// alone on whole tensors, which elementwise ops run together block by block, as XLA fuses them
// into one loop on a TPU) and the runner of one fused region; internal to the plugin.
#pragma once
#include <cstddef>  // size_t
#include <cstdint>  // int64_t
#include <vector>   // std::vector

#include "emulator.hpp"  // Program, TensorPtr, TensorType
#include "kernels.hpp"   // EwPlan

namespace torchtpu::emulator {
namespace detail {

/// Where a member of a region reads an operand or writes its result.
struct Loc {
  enum Kind {
    Env,      ///< a whole tensor of the environment (an input of the region)
    Splat,    ///< a splat constant, never materialized: Region::splats[index]
    Scratch,  ///< a block-sized buffer: a value used only inside the region
    Out       ///< a whole tensor the region writes: Region::outs[index]
  } kind = Env;
  int slot = -1;        ///< the value slot
  int index = -1;       ///< Splat, Scratch, Out: see above
  bool scalar = false;  ///< Env: a rank-0 operand, read from element 0 in every block
};

/// One op of a region: an elementwise op (EwPlan) or a broadcast_in_dim (a gather from a tensor
/// of another shape, or a splat).
struct Member {
  size_t op = 0;
  bool broadcast = false;
  EwPlan plan;                   ///< elementwise members
  std::vector<int64_t> strides;  ///< broadcast: operand element stride per result axis
  std::vector<Loc> in;
  Loc out;
};

/// Elementwise ops with one result shape, evaluated kBlock elements at a time through all of
/// them; only region inputs are read from whole tensors and only `outs` are written to them.
struct Region {
  std::vector<int64_t> dims;
  int64_t numel = 0;
  std::vector<Member> members;  ///< in program order
  std::vector<double> splats;   ///< values of the splat constants members read
  int num_scratch = 0;          ///< block buffers (reused once their value is dead)
  std::vector<int> outs;        ///< slots written whole: used outside the region, or returned
  std::vector<TensorType> out_types;
};

/// One step of a schedule: op `index` alone on whole tensors, or region `index`.
struct Step {
  bool region = false;
  size_t index = 0;
  std::vector<int> release;  ///< slots last read by this step (freed after it)
};

}  // namespace detail

/// How one function runs: `fused` (the default) or `unfused` (every op alone, in program order;
/// TORCHTPU_EMULATOR_FUSION=0). Both give bit-identical results.
struct Schedule {
  std::vector<detail::Region> regions;
  std::vector<detail::Step> fused, unfused;
};

namespace detail {

/// Elements per block of a fused region (a few cache-resident buffers of doubles).
inline constexpr size_t kBlock = 2048;

/// Both schedules of `p`. Does not throw for ops it cannot fuse: they run alone and report their
/// own errors when run.
Schedule make_schedule(const Program& p);

/// Runs region `r` of function `p`: reads region inputs from `env`, stores its outputs there.
void run_region(const Program& p, const Region& r, std::vector<TensorPtr>& env);

/// False when TORCHTPU_EMULATOR_FUSION=0 (read at every execution).
bool fusion_enabled();

}  // namespace detail
}  // namespace torchtpu::emulator
