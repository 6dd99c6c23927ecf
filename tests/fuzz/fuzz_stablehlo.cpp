// tests/fuzz/fuzz_stablehlo.cpp — libFuzzer harness for the TPU emulator's StableHLO text parser
// (src/device/parser.cpp, with the fusion planner it calls). Any input must either parse or
// throw EmuError; std::logic_error (std::stoll on a malformed number) is also accepted, since
// the plugin's C ABI boundary reports it as INVALID_ARGUMENT (plugin_api.cpp `guarded`).
// Anything else — a crash, a sanitizer report, another exception, a hang — is a bug.
#include <cstddef>    // size_t
#include <cstdint>    // uint8_t
#include <stdexcept>  // std::logic_error
#include <string>     // std::string

#include "../../src/device/emulator.hpp"  // parse_program, EmuError

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace emu = torchtpu::emulator;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto p = emu::parse_program(text);
    // Touch what the interpreter reads first: the signature and every op's types.
    size_t n = p->params.size() + p->results.size() + p->functions.size();
    for (const emu::Op& op : p->ops) n += op.operands.size() + op.result_types.size();
    if (n == static_cast<size_t>(-1)) __builtin_trap();
  } catch (const emu::EmuError& e) {
    if (e.msg.empty()) __builtin_trap();  // every error says what is wrong
  } catch (const std::logic_error&) {
  }
  return 0;
}
