#include "wafersim/pe/ce_errors.hpp"

#include <cstdio>

#include "wafersim/pe/ce_core.hpp"

namespace wafersim::pe {

std::string where(const CeCore& core, uint32_t pc, const char* mnemonic) {
  return core.name() + " pc " + std::to_string(pc) + " (" + mnemonic + "): ";
}

void program_error(const CeCore& core, uint32_t pc, const char* mnemonic,
                   const std::string& what, ErrorCategory category) {
  throw ProgramError(where(core, pc, mnemonic) + what, category);
}

void memory_error(const CeCore& core, uint32_t pc, const char* mnemonic,
                  const std::string& what) {
  throw MemoryAccessError(where(core, pc, mnemonic) + what);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace wafersim::pe
