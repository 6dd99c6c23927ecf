// torchtpu/fuse/intrin.hpp — the x86 intrinsics the vector path calls: SSE through AVX2 and
// AVX-512 F/VL/BW/DQ. With GCC only those sub-headers of <immintrin.h> are parsed: the whole
// header is about twice the text (AMX, AVX512-FP16, VNNI, ...) and costs every translation
// unit ~0.2 s more to parse (docs/compile-time.md). With other compilers, or when
// <immintrin.h> was included first, the whole header.
//
// GCC's sub-headers refuse direct inclusion unless `_IMMINTRIN_H_INCLUDED` (immintrin.h's own
// guard) is defined; it is defined only around them and removed after, so a later
// `#include <immintrin.h>` still reads the rest (the sub-headers have guards of their own).
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#if !defined(__clang__) && !defined(_IMMINTRIN_H_INCLUDED) && defined(__has_include)
#if __has_include(<avx512vlbwintrin.h>)
#define TORCHTPU_INTRIN_SUBSET 1
#endif
#endif
#ifdef TORCHTPU_INTRIN_SUBSET
#define _IMMINTRIN_H_INCLUDED
#include <mmintrin.h>
#include <xmmintrin.h>
#include <emmintrin.h>
#include <pmmintrin.h>
#include <tmmintrin.h>
#include <smmintrin.h>
#include <avxintrin.h>
#include <avx2intrin.h>
#include <fmaintrin.h>
#include <avx512fintrin.h>
#include <avx512vlintrin.h>
#include <avx512bwintrin.h>
#include <avx512dqintrin.h>
#include <avx512vlbwintrin.h>
#include <avx512vldqintrin.h>
#undef _IMMINTRIN_H_INCLUDED
#undef TORCHTPU_INTRIN_SUBSET
#else
#include <immintrin.h>
#endif
#endif
