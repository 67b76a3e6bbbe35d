#include "wafersim/fabric/router.hpp"

#include "wafersim/errors.hpp"

namespace wafersim::fabric {

QueueSlot& Router::ensure_slot(unsigned key, int capacity) {
  const int r = rank(key);
  if (has(key)) return slots[r];
  QueueSlot s;
  s.key = static_cast<uint8_t>(key);
  slots.insert(slots.begin() + r, s);
  // Each slot's ring buffer is relative to its own block, so shifting blocks keeps queues.
  entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(r) * capacity, capacity, Wavelet{});
  keys |= uint64_t{1} << key;
  return slots[r];
}

void Router::remove_slot(unsigned key, int capacity) {
  if (!has(key)) return;
  const int r = rank(key);
  if (slots[r].count != 0) internal_error("removing a non-empty router queue");
  slots.erase(slots.begin() + r);
  const auto first = entries.begin() + static_cast<std::ptrdiff_t>(r) * capacity;
  entries.erase(first, first + capacity);
  keys &= ~(uint64_t{1} << key);
}

}  // namespace wafersim::fabric
