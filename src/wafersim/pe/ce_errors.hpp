// Errors raised while a compute element runs a program: each names the PE, the
// instruction's address and mnemonic, and the offending field or address.
#pragma once

#include <cstdint>
#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::pe {

struct CeCore;

// "PE(r,c) pc N (mnemonic): "
std::string where(const CeCore& core, uint32_t pc, const char* mnemonic);

[[noreturn]] void program_error(const CeCore& core, uint32_t pc, const char* mnemonic,
                                const std::string& what,
                                ErrorCategory category = ErrorCategory::usage);
[[noreturn]] void memory_error(const CeCore& core, uint32_t pc, const char* mnemonic,
                               const std::string& what);

std::string hex(uint64_t v);

}  // namespace wafersim::pe
