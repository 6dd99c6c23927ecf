// torchtpu/print.hpp — `operator<<` for tensors and expressions (same text as fmt's "{}"), and
// for devices ("cpu", "tpu:0", as torch::Device prints).
#pragma once
#include <concepts>  // std::same_as
#include <iosfwd>    // std::basic_ostream (declared; <ostream> comes with the user's stream)
#include <string>    // std::string

#include <fmt/core.h>  // fmt::format

#include "core/device.hpp"  // Device
#include "core/format.hpp"  // fmt::formatter for expressions

namespace torchtpu {

template <class CharT, class Traits, expression E>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os, const E& e) {
  const std::string s = fmt::format("{}", e);
  os.write(s.data(), static_cast<std::streamsize>(s.size()));
  return os;
}

/// Writes `d.str()` ("cpu", "tpu:0", "cuda:1"). A constrained template, so strings (which
/// convert to Device implicitly) never pick this overload.
template <class CharT, class Traits, std::same_as<Device> D>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os, const D& d) {
  const std::string s = d.str();
  os.write(s.data(), static_cast<std::streamsize>(s.size()));
  return os;
}

}  // namespace torchtpu
