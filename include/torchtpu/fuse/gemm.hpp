// torchtpu/fuse/gemm.hpp — the CPU matrix-product kernel: C[m, n] = A[m, k] · B[k, n] in the
// accumulation type, for any operand strides (operands are packed as needed).
#pragma once
#include <algorithm>  // std::min
#include <cstdint>    // int64_t
#include <vector>     // std::vector

#include "../core/dtype.hpp"  // convert, opmath_t

namespace torchtpu::detail {

/// A per-thread scratch buffer that only grows (so repeated materializations do not
/// allocate after the first call). `slot` separates buffers used at the same time.
template <class T>
T* workspace(size_t n, int slot) {
  thread_local std::vector<T> buf[4];
  auto& b = buf[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

/// C (row-major, leading dim `ldc`, type Acc) = A · B, where A has strides (sam, sak) and B
/// has strides (sbk, sbn), both of element type T, accumulating in Acc (float for bf16/half).
/// Rows [row_begin, row_end) of C only.
template <class T, class Acc>
void gemm_rows(int64_t row_begin, int64_t row_end, int64_t n, int64_t k, const T* a, int64_t sam,
               int64_t sak, const T* b, int64_t sbk, int64_t sbn, Acc* c, int64_t ldc) {
  constexpr int64_t kc = 256, nc = 512;
  // Pack a [kc, nc] block of B row-major in Acc.
  Acc* bp = workspace<Acc>(size_t(kc * nc), 0);
  for (int64_t i = row_begin; i < row_end; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = Acc(0);
  for (int64_t j0 = 0; j0 < n; j0 += nc) {
    const int64_t nb = std::min(nc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kc) {
      const int64_t kb = std::min(kc, k - p0);
      for (int64_t p = 0; p < kb; ++p) {
        const T* brow = b + (p0 + p) * sbk + j0 * sbn;
        Acc* dst = bp + p * nb;
        if (sbn == 1 && std::is_same_v<T, Acc>) {
          for (int64_t j = 0; j < nb; ++j) dst[j] = Acc(brow[j]);
        } else {
          for (int64_t j = 0; j < nb; ++j) dst[j] = convert<Acc>(brow[j * sbn]);
        }
      }
      for (int64_t i = row_begin; i < row_end; ++i) {
        Acc* crow = c + i * ldc + j0;
        const T* arow = a + i * sam + p0 * sak;
        for (int64_t p = 0; p < kb; ++p) {
          const Acc av = convert<Acc>(arow[p * sak]);
          const Acc* brow = bp + p * nb;
          for (int64_t j = 0; j < nb; ++j) crow[j] += av * brow[j];
        }
      }
    }
  }
}

}  // namespace torchtpu::detail
