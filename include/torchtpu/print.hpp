// torchtpu/print.hpp — `operator<<` for tensors and expressions (same text as fmt's "{}").
#pragma once
#include <ostream>  // std::ostream

#include <fmt/format.h>  // fmt::format

#include "core/format.hpp"  // fmt::formatter for expressions

namespace torchtpu {

template <expression E>
std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << fmt::format("{}", e);
}

}  // namespace torchtpu
