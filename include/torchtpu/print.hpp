// torchtpu/print.hpp — `operator<<` for tensors and expressions (same text as fmt's "{}").
#pragma once
#include <iosfwd>  // std::basic_ostream (declared; <ostream> comes with the user's stream)
#include <string>  // std::string

#include <fmt/core.h>  // fmt::format

#include "core/format.hpp"  // fmt::formatter for expressions

namespace torchtpu {

template <class CharT, class Traits, expression E>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os, const E& e) {
  const std::string s = fmt::format("{}", e);
  os.write(s.data(), static_cast<std::streamsize>(s.size()));
  return os;
}

}  // namespace torchtpu
