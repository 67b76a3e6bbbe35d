#include "wafersim/pe/color_set.hpp"

#include "wafersim/pe/ce_errors.hpp"

namespace wafersim::pe {

static_assert(isa::kIds == fabric::kMaxColorIds, "the ISA data and the fabric agree on the ids");

fabric::ColorMask color_set_of(const CeCore& core, uint32_t pc, const char* mnemonic,
                               uint32_t value, bool is_imm8) {
  if (value < static_cast<uint32_t>(fabric::kMaxColorIds)) return fabric::ColorMask{1} << value;
  if (value == (is_imm8 ? isa::kAllIdsImm8 : isa::kAllIdsValue16)) return ~fabric::ColorMask{0};
  program_error(core, pc, mnemonic,
                "source value " + std::to_string(value) + " names no id: use 0..63, or " +
                    std::to_string(is_imm8 ? isa::kAllIdsImm8 : isa::kAllIdsValue16) +
                    " for all ids");
}

void apply_color_op(CeCore& core, isa::Kind kind, fabric::ColorMask ids) {
  switch (kind) {
    case isa::Kind::block: core.change_ids(IdChange::block, ids, IdCause::instruction); break;
    case isa::Kind::unblock: core.change_ids(IdChange::unblock, ids, IdCause::instruction); break;
    case isa::Kind::activate: core.change_ids(IdChange::activate, ids, IdCause::instruction); break;
    default: internal_error("apply_color_op: not a block/unblock/activate");
  }
}

}  // namespace wafersim::pe
