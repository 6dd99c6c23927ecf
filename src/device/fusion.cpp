// src/device/fusion.cpp — loop fusion of elementwise regions in the TPU emulator (fusion.hpp).
//
// The planner walks a function in program order. Each elementwise op (and each broadcast_in_dim)
// joins the open region of its result shape; a region closes (is scheduled) as soon as an op
// outside it reads one of its values, so every region runs after all its inputs exist and
// before any reader of its outputs. Splat constants are never materialized for a region: it
// reads their value. Ops are elementwise and each rounds its result to its type exactly as on
// whole tensors, so fused and unfused results are bit-identical.
#include <algorithm>   // std::fill, std::min, std::max
#include <cstdlib>     // std::getenv
#include <cstring>     // std::memcpy
#include <exception>   // std::exception
#include <functional>  // std::function
#include <map>         // std::map
#include <memory>      // std::make_shared
#include <set>         // std::set
#include <string_view> // std::string_view
#include <vector>      // std::vector

#include "emulator.hpp"  // Program, Tensor, EmuError, plan_fusion
#include "fusion.hpp"    // Schedule, Region, Member, Loc, Step
#include "kernels.hpp"   // plan_elementwise, ew_run, run_constant, broadcast_strides, take_buffer, share

namespace torchtpu::emulator {
namespace detail {
namespace {

/// The value of splat constant `op` (one element for the whole result), or false if `op` is not
/// one. The value goes through run_constant's own parsing and rounding.
bool splat_value(const Op& op, double& value) {
  if (op.name != "stablehlo.constant" || op.result_types.size() != 1 || !op.operands.empty()) return false;
  const auto it = op.attrs.find("value");
  if (it == op.attrs.end()) return false;
  const Attr& v = it->second;
  const TensorType& out = op.result_types[0];
  if (!(v.type == out) || out.numel() == 0) return false;
  if (!v.s.empty()) {  // hex blob: a splat holds one element
    if (v.s.size() < 2 || (v.s.size() - 2) / 2 != static_cast<size_t>(et_bytes(out.et))) return false;
  } else {
    size_t count = 0;
    std::function<void(const Attr&)> walk = [&](const Attr& x) {
      if (x.kind == Attr::List) for (const auto& y : x.items) walk(y);
      else ++count;
    };
    for (const auto& x : v.items) walk(x);
    if (count != 1) return false;
  }
  Op one = op;  // the same value as a rank-0 constant
  const TensorType scalar{out.et, {}};
  one.attrs["value"].type = scalar;
  one.result_types[0] = scalar;
  try {
    value = run_constant(one, scalar).data.at(0);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

/// dst[j] = src[Σ idx_k·strides_k] for the row-major indices idx of elements [start, start+len)
/// of the index space `dims`.
void gather_block(const double* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                  size_t start, size_t len, double* dst) {
  const size_t r = dims.size();
  if (r == 0) {
    if (len) dst[0] = src[0];
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t rem = static_cast<int64_t>(start), off = 0;
  for (size_t a = r; a-- > 0;) {
    idx[a] = rem % dims[a];
    rem /= dims[a];
    off += idx[a] * strides[a];
  }
  const int64_t inner = dims[r - 1], is = strides[r - 1];
  size_t done = 0;
  while (done < len) {
    const size_t run = std::min(static_cast<size_t>(inner - idx[r - 1]), len - done);
    const double* s = src + off;
    double* d = dst + done;
    if (is == 0) std::fill(d, d + run, s[0]);
    else if (is == 1) std::memcpy(d, s, run * sizeof(double));
    else for (size_t j = 0; j < run; ++j) d[j] = s[static_cast<int64_t>(j) * is];
    done += run;
    idx[r - 1] += static_cast<int64_t>(run);
    off += static_cast<int64_t>(run) * is;
    if (idx[r - 1] < inner) continue;
    off -= inner * is;  // odometer over the outer axes
    idx[r - 1] = 0;
    for (size_t a = r - 1; a-- > 0;) {
      off += strides[a];
      if (++idx[a] < dims[a]) break;
      off -= strides[a] * dims[a];
      idx[a] = 0;
    }
  }
}

/// Slots last read (from the environment) by each step; returned slots are never released.
void fill_release(std::vector<Step>& steps, const std::vector<std::vector<int>>& reads, const Program& p) {
  std::vector<int> last(static_cast<size_t>(p.num_slots), -1);
  for (size_t i = 0; i < steps.size(); ++i)
    for (int s : reads[i]) last[static_cast<size_t>(s)] = static_cast<int>(i);
  for (int s : p.result_slots) last[static_cast<size_t>(s)] = -1;
  for (size_t s = 0; s < last.size(); ++s)
    if (last[s] >= 0) steps[static_cast<size_t>(last[s])].release.push_back(static_cast<int>(s));
}

}  // namespace

bool fusion_enabled() {
  const char* v = std::getenv("TORCHTPU_EMULATOR_FUSION");
  return !(v && std::string_view(v) == "0");
}

Schedule make_schedule(const Program& p) {
  Schedule sc;
  const size_t nslots = static_cast<size_t>(p.num_slots), nops = p.ops.size();
  std::vector<const TensorType*> type(nslots, nullptr);
  for (size_t i = 0; i < p.params.size() && i < p.param_slots.size(); ++i)
    type[static_cast<size_t>(p.param_slots[i])] = &p.params[i];
  for (const Op& op : p.ops)
    for (size_t i = 0; i < op.results.size() && i < op.result_types.size(); ++i)
      type[static_cast<size_t>(op.results[i])] = &op.result_types[i];
  std::vector<std::vector<size_t>> users(nslots);
  for (size_t k = 0; k < nops; ++k)
    for (int s : p.ops[k].operands) users[static_cast<size_t>(s)].push_back(k);
  std::vector<char> returned(nslots, 0);
  for (int s : p.result_slots) returned[static_cast<size_t>(s)] = 1;

  // Unfused: every op alone, in program order.
  {
    std::vector<std::vector<int>> reads;
    for (size_t k = 0; k < nops; ++k) {
      sc.unfused.push_back(Step{false, k, {}});
      reads.push_back(p.ops[k].operands);
    }
    fill_release(sc.unfused, reads, p);
  }

  // Candidates: 1 = elementwise (checked), 2 = broadcast_in_dim; splat constants by slot.
  std::vector<char> cand(nops, 0);
  std::vector<EwPlan> plans(nops);
  std::vector<std::vector<int64_t>> bstrides(nops);
  std::vector<int> splat_of(nslots, -1);  // slot → index into splat_values
  std::vector<double> splat_values;
  for (size_t k = 0; k < nops; ++k) {
    const Op& op = p.ops[k];
    if (op.results.size() != 1 || op.result_types.size() != 1) continue;
    double v = 0;
    if (splat_value(op, v)) {
      splat_of[static_cast<size_t>(op.results[0])] = static_cast<int>(splat_values.size());
      splat_values.push_back(v);
      continue;
    }
    std::vector<const TensorType*> in;
    bool typed = true;
    for (int s : op.operands) {
      typed = typed && type[static_cast<size_t>(s)] != nullptr;
      in.push_back(type[static_cast<size_t>(s)]);
    }
    if (!typed) continue;
    try {
      if (is_elementwise(op.name)) {
        plans[k] = plan_elementwise(op, in, op.result_types[0]);
        cand[k] = 1;
      } else if (op.name == "stablehlo.broadcast_in_dim" && in.size() == 1) {
        bstrides[k] = broadcast_strides(op, *in[0], op.result_types[0]);
        cand[k] = 2;
      }
    } catch (const std::exception&) {  // runs alone, and fails there with its own message
      cand[k] = 0;
    }
  }

  // Regions, in program order.
  std::vector<int> region_of_slot(nslots, -1), region_of_op(nops, -1);
  std::map<std::vector<int64_t>, int> open;  // result dims → open region
  std::vector<char> closed;
  auto close = [&](int r) {
    if (closed[static_cast<size_t>(r)]) return;
    closed[static_cast<size_t>(r)] = 1;
    open.erase(sc.regions[static_cast<size_t>(r)].dims);
    sc.fused.push_back(Step{true, static_cast<size_t>(r), {}});
  };
  for (size_t k = 0; k < nops; ++k) {
    const Op& op = p.ops[k];
    int target = -1;
    if (cand[k] == 1)
      if (auto it = open.find(op.result_types[0].dims); it != open.end()) target = it->second;
    for (int s : op.operands) {  // a reader outside a region closes it
      const int r = region_of_slot[static_cast<size_t>(s)];
      if (r >= 0 && r != target) close(r);
    }
    if (cand[k]) {
      if (target < 0) {
        if (auto it = open.find(op.result_types[0].dims); it != open.end()) {
          target = it->second;
        } else {
          target = static_cast<int>(sc.regions.size());
          Region reg;
          reg.dims = op.result_types[0].dims;
          reg.numel = op.result_types[0].numel();
          sc.regions.push_back(std::move(reg));
          closed.push_back(0);
          open[op.result_types[0].dims] = target;
        }
      }
      region_of_op[k] = target;
      region_of_slot[static_cast<size_t>(op.results[0])] = target;
      Member m;
      m.op = k;
      m.broadcast = cand[k] == 2;
      m.plan = plans[k];
      m.strides = bstrides[k];
      sc.regions[static_cast<size_t>(target)].members.push_back(std::move(m));
      continue;
    }
    if (op.results.size() == 1 && splat_of[static_cast<size_t>(op.results[0])] >= 0 &&
        !returned[static_cast<size_t>(op.results[0])]) {
      bool only_regions = true;  // then no one needs the whole tensor
      for (size_t u : users[static_cast<size_t>(op.results[0])]) only_regions = only_regions && cand[u] != 0;
      if (only_regions) continue;
    }
    sc.fused.push_back(Step{false, k, {}});
  }
  for (size_t r = 0; r < sc.regions.size(); ++r) close(static_cast<int>(r));

  // Where each member reads and writes; block buffers are reused once their value is dead.
  for (size_t ri = 0; ri < sc.regions.size(); ++ri) {
    Region& reg = sc.regions[ri];
    std::map<int, Loc> produced;  // slot → location, for members' results
    std::map<int, size_t> last_member;
    for (size_t mi = 0; mi < reg.members.size(); ++mi)
      for (int s : p.ops[reg.members[mi].op].operands) last_member[s] = mi;
    std::map<int, int> splat_index;
    std::vector<int> free_scratch;
    for (size_t mi = 0; mi < reg.members.size(); ++mi) {
      Member& m = reg.members[mi];
      const Op& op = p.ops[m.op];
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const int s = op.operands[i];
        Loc l;
        l.slot = s;
        if (const int sp = splat_of[static_cast<size_t>(s)]; sp >= 0) {
          auto [it, inserted] = splat_index.emplace(s, static_cast<int>(reg.splats.size()));
          if (inserted) reg.splats.push_back(splat_values[static_cast<size_t>(sp)]);
          l.kind = Loc::Splat;
          l.index = it->second;
        } else if (auto it = produced.find(s); it != produced.end()) {
          l = it->second;
        } else {
          l.kind = Loc::Env;
          l.scalar = !m.broadcast && m.plan.scalar[i];
        }
        m.in.push_back(l);
      }
      const int slot = op.results[0];
      bool outside = returned[static_cast<size_t>(slot)] != 0;
      for (size_t u : users[static_cast<size_t>(slot)]) outside = outside || region_of_op[u] != static_cast<int>(ri);
      m.out.slot = slot;
      if (outside) {
        m.out.kind = Loc::Out;
        m.out.index = static_cast<int>(reg.outs.size());
        reg.outs.push_back(slot);
        reg.out_types.push_back(op.result_types[0]);
      } else {
        m.out.kind = Loc::Scratch;
        if (free_scratch.empty()) {
          m.out.index = reg.num_scratch++;
        } else {
          m.out.index = free_scratch.back();
          free_scratch.pop_back();
        }
      }
      produced[slot] = m.out;
      std::set<int> dead;  // scratch values whose last reader is this member
      for (const Loc& l : m.in)
        if (l.kind == Loc::Scratch && last_member[l.slot] == mi) dead.insert(l.index);
      for (int b : dead) free_scratch.push_back(b);
    }
  }

  // Release points of the fused schedule.
  std::vector<std::vector<int>> reads;
  for (const Step& st : sc.fused) {
    std::vector<int> r;
    if (st.region) {
      for (const Member& m : sc.regions[st.index].members)
        for (const Loc& l : m.in)
          if (l.kind == Loc::Env) r.push_back(l.slot);
    } else {
      r = p.ops[st.index].operands;
    }
    reads.push_back(std::move(r));
  }
  fill_release(sc.fused, reads, p);
  return sc;
}

void run_region(const Program& p, const Region& r, std::vector<TensorPtr>& env) {
  const size_t n = static_cast<size_t>(r.numel);
  std::vector<Tensor> outs(r.out_types.size());  // every element is written below
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].type = r.out_types[i];
    outs[i].data = take_buffer(n, false);
  }
  for (const Member& m : r.members)
    for (const Loc& l : m.in)
      if (l.kind == Loc::Env && !env[static_cast<size_t>(l.slot)])
        op_fail(p.ops[m.op], "operand is not available", kInternal);
  const size_t block = std::min(kBlock, std::max<size_t>(n, 1));
  std::vector<double> buffers((static_cast<size_t>(r.num_scratch) + r.splats.size()) * block);
  double* const scratch = buffers.data();
  double* const splats = scratch + static_cast<size_t>(r.num_scratch) * block;
  for (size_t j = 0; j < r.splats.size(); ++j) std::fill(splats + j * block, splats + (j + 1) * block, r.splats[j]);
  std::vector<const double*> ins;
  for (size_t start = 0; start < n; start += block) {
    const size_t len = std::min(block, n - start);
    auto at = [&](const Loc& l) -> double* {
      switch (l.kind) {
        case Loc::Splat: return splats + static_cast<size_t>(l.index) * block;
        case Loc::Scratch: return scratch + static_cast<size_t>(l.index) * block;
        case Loc::Out: return outs[static_cast<size_t>(l.index)].data.data() + start;
        default: return nullptr;
      }
    };
    for (const Member& m : r.members) {
      double* out = at(m.out);
      if (m.broadcast) {
        const Loc& l = m.in[0];
        if (l.kind == Loc::Splat) std::fill(out, out + len, r.splats[static_cast<size_t>(l.index)]);
        else gather_block(env[static_cast<size_t>(l.slot)]->data.data(), r.dims, m.strides, start, len, out);
        continue;
      }
      ins.clear();
      for (const Loc& l : m.in)
        ins.push_back(l.kind == Loc::Env ? env[static_cast<size_t>(l.slot)]->data.data() + (l.scalar ? 0 : start) : at(l));
      ew_run(m.plan, ins.data(), out, len);
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) env[static_cast<size_t>(r.outs[i])] = share(std::move(outs[i]));
}

}  // namespace detail

void plan_fusion(Program& p) { p.schedule = std::make_shared<const Schedule>(detail::make_schedule(p)); }

}  // namespace torchtpu::emulator
