// torchtpu/torchtpu.hpp — the umbrella header for users: tensors, expressions, the CPU
// engine and printing. Never included by the library itself. The operator library (cat,
// conv2d, index, sort, ...: every op with a schema, also on AnyTensor and PJRT devices) is
// <torchtpu/ops/all.hpp> or one family's header (<torchtpu/ops/shape.hpp>, ...): it is kept out
// of this header so that a unit of fused expressions compiles as fast as before the library
// (bench/compile_time).
#pragma once
#include "core/device.hpp"     // Device
#include "core/dtype.hpp"      // ScalarType, bfloat16, half, promotion
#include "core/errors.hpp"     // ShapeError, TypeError, IndexError, ...
#include "core/factories.hpp"  // zeros, ones, arange, rand, ...
#include "core/format.hpp"     // fmt::formatter for tensors and expressions
#include "core/tensor.hpp"     // Tensor
#include "device/factories.hpp"  // zeros(shape, device), ...; Tensor::to(device)
#include "device/modes.hpp"      // execution modes, matmul precision (PJRT devices)
#include "ops/arith.hpp"       // add, sub, mul, div, floor_divide, remainder, pow, ...
#include "ops/compare.hpp"     // eq, lt, logical_*, where, to<U>
#include "ops/matmul.hpp"      // matmul, bmm, linear
#include "ops/methods.hpp"     // method forms, clone, fill_, +=
#include "ops/operators.hpp"   // + - * / % == < & | ~ !
#include "ops/reduce.hpp"      // sum, mean, max, argmax, softmax, ...
#include "ops/unary.hpp"       // exp, log, tanh, relu, gelu, ...
#include "print.hpp"           // operator<<
