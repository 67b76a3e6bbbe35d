#include "wafersim/fabric/queue_arena.hpp"

#include <algorithm>

#include "wafersim/errors.hpp"

namespace wafersim::fabric {

void QueueArena::move_block(Router& r, uint32_t new_base, int new_room) {
  const int n = r.slot_count();
  const size_t cap = static_cast<size_t>(capacity_);
  for (int i = 0; i < n; ++i) {
    slots_[new_base + i] = slots_[r.slot_base + i];
    std::copy_n(&entries_[(r.slot_base + i) * cap], cap, &entries_[(new_base + i) * cap]);
  }
  r.slot_base = new_base;
  r.slot_room = static_cast<uint8_t>(new_room);
}

QueueSlot& QueueArena::ensure_slot(Router& r, unsigned key) {
  if (r.has(key)) return slots_[r.slot_index(key)];
  const int n = r.slot_count();
  if (n == r.slot_room) {  // grow: move to a block at the end, twice as large
    const int room = std::min(64, std::max(2, 2 * n));
    const auto base = static_cast<uint32_t>(slots_.size());
    slots_.resize(slots_.size() + static_cast<size_t>(room));
    entries_.resize(slots_.size() * static_cast<size_t>(capacity_));
    move_block(r, base, room);
  }
  // Shift the slots after `key`'s rank up by one to make its place.
  const uint32_t at = r.slot_index(key);
  const size_t cap = static_cast<size_t>(capacity_);
  for (uint32_t i = r.slot_base + static_cast<uint32_t>(n); i > at; --i) {
    slots_[i] = slots_[i - 1];
    std::copy_n(&entries_[(i - 1) * cap], cap, &entries_[i * cap]);
  }
  slots_[at] = QueueSlot{};
  slots_[at].key = static_cast<uint8_t>(key);
  const uint64_t below = (uint64_t{1} << (at - r.slot_base)) - 1;  // busy bits move up too
  r.busy = (r.busy & below) | ((r.busy & ~below) << 1);
  r.keys |= uint64_t{1} << key;
  ++used_;
  return slots_[at];
}

void QueueArena::remove_slot(Router& r, unsigned key) {
  if (!r.has(key)) return;
  const uint32_t at = r.slot_index(key);
  if (slots_[at].count != 0) internal_error("removing a non-empty router queue");
  const uint32_t end = r.slot_base + static_cast<uint32_t>(r.slot_count());
  const size_t cap = static_cast<size_t>(capacity_);
  for (uint32_t i = at; i + 1 < end; ++i) {
    slots_[i] = slots_[i + 1];
    std::copy_n(&entries_[(i + 1) * cap], cap, &entries_[i * cap]);
  }
  const uint64_t below = (uint64_t{1} << (at - r.slot_base)) - 1;
  r.busy = (r.busy & below) | ((r.busy >> 1) & ~below);
  r.keys &= ~(uint64_t{1} << key);
  --used_;
}

void QueueArena::compact(std::vector<Router>& routers) {
  std::vector<QueueSlot> slots;
  std::vector<Wavelet> entries;
  slots.reserve(used_);
  entries.reserve(used_ * static_cast<size_t>(capacity_));
  const size_t cap = static_cast<size_t>(capacity_);
  for (Router& r : routers) {
    const int n = r.slot_count();
    const auto base = static_cast<uint32_t>(slots.size());
    for (int i = 0; i < n; ++i) {
      slots.push_back(slots_[r.slot_base + i]);
      entries.insert(entries.end(), &entries_[(r.slot_base + i) * cap],
                     &entries_[(r.slot_base + i) * cap] + cap);
    }
    r.slot_base = base;
    r.slot_room = static_cast<uint8_t>(n);
  }
  slots_.swap(slots);
  entries_.swap(entries);
}

}  // namespace wafersim::fabric
