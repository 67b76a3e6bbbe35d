#include "wafersim/pe/picker.hpp"

#include <bit>

namespace wafersim::pe {

namespace {

// Bit i of x to bit 2 i.
uint64_t spread_bits(uint32_t x) {
  uint64_t v = x;
  v = (v | (v << 16)) & 0x0000FFFF0000FFFFull;
  v = (v | (v << 8)) & 0x00FF00FF00FF00FFull;
  v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0Full;
  v = (v | (v << 2)) & 0x3333333333333333ull;
  v = (v | (v << 1)) & 0x5555555555555555ull;
  return v;
}

// The first set position at or after `from` (0..127) of the 128 bits high:low, or -1.
int first_position(uint64_t low, uint64_t high, int from) {
  if (from < 64) {
    if (const uint64_t m = low & (~uint64_t{0} << from)) return std::countr_zero(m);
    return high ? 64 + std::countr_zero(high) : -1;
  }
  const uint64_t m = high & (~uint64_t{0} << (from - 64));
  return m ? 64 + std::countr_zero(m) : -1;
}

}  // namespace

Pick Picker::select(fabric::ColorMask nonempty) {
  const fabric::ColorMask queues = nonempty & ~blocked_;
  const fabric::ColorMask acts = active_ & ~blocked_;
  if ((queues | acts) == 0) return {};
  if (policy_ == PickerPolicy::pick_from_last && last_queue_ >= 0 &&
      ((queues >> last_queue_) & 1u)) {
    return {Pick::Kind::wavelet, last_queue_};
  }
  // Round robin over 128 positions, a queue and an activation per id, so that every
  // candidate is served before any is served twice [0320], [0375]: position 2 id is id's
  // queue, 2 id + 1 its activation; the first candidate at or after next_, cyclically.
  const uint64_t low = spread_bits(static_cast<uint32_t>(queues)) |
                       (spread_bits(static_cast<uint32_t>(acts)) << 1);
  const uint64_t high = spread_bits(static_cast<uint32_t>(queues >> 32)) |
                        (spread_bits(static_cast<uint32_t>(acts >> 32)) << 1);
  int p = first_position(low, high, next_);
  if (p < 0) p = first_position(low, high, 0);
  constexpr int kPositions = 2 * fabric::kMaxColorIds;
  static_assert(fabric::kMaxColorIds == 64, "two 64-bit words of positions");
  next_ = (p + 1) % kPositions;
  const int id = p / 2;
  if (p & 1) {
    active_ &= ~(fabric::ColorMask{1} << id);  // [0381]: the picked id is deactivated
    last_queue_ = -1;
    return {Pick::Kind::activation, id};
  }
  last_queue_ = id;
  return {Pick::Kind::wavelet, id};
}

}  // namespace wafersim::pe
