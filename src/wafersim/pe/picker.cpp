#include "wafersim/pe/picker.hpp"

namespace wafersim::pe {

Pick Picker::select(fabric::ColorMask nonempty) {
  const fabric::ColorMask queues = nonempty & ~blocked_;
  const fabric::ColorMask acts = active_ & ~blocked_;
  if ((queues | acts) == 0) return {};
  if (policy_ == PickerPolicy::pick_from_last && last_queue_ >= 0 &&
      ((queues >> last_queue_) & 1u)) {
    return {Pick::Kind::wavelet, last_queue_};
  }
  // Round robin over 128 positions, a queue and an activation per id, so that every
  // candidate is served before any is served twice [0320], [0375].
  constexpr int kPositions = 2 * fabric::kMaxColorIds;
  for (int k = 0; k < kPositions; ++k) {
    const int p = (next_ + k) % kPositions;
    const int id = p / 2;
    const bool is_act = p & 1;
    const fabric::ColorMask set = is_act ? acts : queues;
    if (!((set >> id) & 1u)) continue;
    next_ = (p + 1) % kPositions;
    if (is_act) {
      active_ &= ~(fabric::ColorMask{1} << id);  // [0381]: the picked id is deactivated
      last_queue_ = -1;
      return {Pick::Kind::activation, id};
    }
    last_queue_ = id;
    return {Pick::Kind::wavelet, id};
  }
  return {};
}

}  // namespace wafersim::pe
