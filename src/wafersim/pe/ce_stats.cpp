#include "wafersim/pe/ce_stats.hpp"

namespace wafersim::pe {

const char* stall_cause_name(StallCause c) {
  switch (c) {
    case StallCause::none: return "none";
    case StallCause::input_empty: return "input_empty";
    case StallCause::output_full: return "output_full";
    case StallCause::local_queue_full: return "local_queue_full";
    case StallCause::fifo_empty: return "fifo_empty";
    case StallCause::fifo_full: return "fifo_full";
    case StallCause::ut_slot_busy: return "ut_slot_busy";
  }
  return "?";
}

}  // namespace wafersim::pe
