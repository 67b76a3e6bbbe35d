// Picker 830 [0345]-[0347], [0370], [0375], [0381], [0390]: chooses what starts the next
// task, from the queues with wavelets and the activated ids, gated by the Block bits.
#pragma once

#include <cstdint>

#include "wafersim/fabric/wavelet.hpp"
#include "wafersim/pe/ce_config.hpp"

namespace wafersim::pe {

struct Pick {
  enum class Kind : uint8_t { none, wavelet, activation };
  Kind kind = Kind::none;
  int id = -1;  // the queue (color) of a wavelet pick, or the activated id
};

class Picker {
 public:
  explicit Picker(PickerPolicy policy) : policy_(policy) {}

  fabric::ColorMask active() const { return active_; }
  fabric::ColorMask blocked() const { return blocked_; }

  // Block Bits 899 ('1' = blocked [0397]) and Active Bits 898 [0385].
  void block(fabric::ColorMask ids) { blocked_ |= ids; }
  void unblock(fabric::ColorMask ids) { blocked_ &= ~ids; }
  void activate(fabric::ColorMask ids) { active_ |= ids; }
  bool is_blocked(int id) const { return (blocked_ >> id) & 1u; }

  // Whether select(nonempty) would pick something (it changes nothing when not).
  bool has_candidate(fabric::ColorMask nonempty) const {
    return ((nonempty | active_) & ~blocked_) != 0;
  }

  // Selects among the unblocked queues with wavelets (`nonempty`) and the unblocked
  // activated ids. A wavelet pick names the queue (the caller takes its oldest wavelet
  // and reports whether it was a closeout through note_closeout); an activation pick
  // clears the id's Active bit [0381].
  Pick select(fabric::ColorMask nonempty);

  // Tells pick-from-last that the wavelet just picked closed the stream [0375].
  void note_closeout() { last_queue_ = -1; }

 private:
  PickerPolicy policy_;
  fabric::ColorMask active_ = 0, blocked_ = 0;
  int next_ = 0;         // round-robin position: 2*id (queue) or 2*id+1 (activation)
  int last_queue_ = -1;  // pick-from-last: the queue of the last data-wavelet pick
};

}  // namespace wafersim::pe
