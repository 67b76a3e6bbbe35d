// The ids named by a block / unblock / activate source [0391]-[0395], [0382]: one id
// (0..63), or all ids (255 as an 8-bit immediate, 0xFFFF as a 16-bit value); a vector
// source names one id per element.
#pragma once

#include <cstdint>

#include "wafersim/fabric/wavelet.hpp"
#include "wafersim/pe/ce_core.hpp"
#include "wafersim/pe/isa_tables.hpp"

namespace wafersim::pe {

// Throws ProgramError for a value that names no id.
fabric::ColorMask color_set_of(const CeCore& core, uint32_t pc, const char* mnemonic,
                               uint32_t value, bool is_imm8);

// Sets Block, clears Block, or sets Active for the ids in `ids` [0397], [0385].
void apply_color_op(CeCore& core, isa::Kind kind, fabric::ColorMask ids);

}  // namespace wafersim::pe
