// Storage for every router queue of a fabric in one place: a router's slots (one per color
// it carries) are consecutive, and routers follow each other in id order after compact(),
// so the cycle loop walks memory in order. Only configured colors take space.
#pragma once

#include <cstdint>
#include <vector>

#include "wafersim/fabric/router.hpp"

namespace wafersim::fabric {

class QueueArena {
 public:
  explicit QueueArena(int capacity) : capacity_(capacity) {}

  int capacity() const { return capacity_; }
  QueueSlot& slot(uint32_t index) { return slots_[index]; }
  const QueueSlot& slot(uint32_t index) const { return slots_[index]; }
  // Every slot, and every entry (`capacity` per slot), for the cycle loop.
  QueueSlot* slot_data() { return slots_.data(); }
  Wavelet* entry_data() { return entries_.data(); }
  // The `capacity` ring-buffer entries of a slot.
  Wavelet* entries(uint32_t index) {
    return &entries_[static_cast<size_t>(index) * static_cast<size_t>(capacity_)];
  }
  const Wavelet* entries(uint32_t index) const {
    return &entries_[static_cast<size_t>(index) * static_cast<size_t>(capacity_)];
  }

  // Adds an empty slot for `key` to router `r` (no-op when present), moving the router's
  // slots to a larger block when its room is used up.
  QueueSlot& ensure_slot(Router& r, unsigned key);
  // Removes the slot of `key` from `r`; its queue must be empty.
  void remove_slot(Router& r, unsigned key);
  // Rewrites the arena with the routers' slots in router order and no unused room.
  void compact(std::vector<Router>& routers);
  // Slots no router uses any more (left behind by moves and removals).
  size_t unused() const { return slots_.size() - used_; }

 private:
  void move_block(Router& r, uint32_t new_base, int new_room);

  int capacity_;
  std::vector<QueueSlot> slots_;
  std::vector<Wavelet> entries_;
  size_t used_ = 0;  // slots that belong to a router's key
};

}  // namespace wafersim::fabric
