#include "wafersim/sim/sleepers.hpp"

namespace wafersim::sim {

void Sleepers::note(const fabric::Fabric& f, const fabric::CycleCounters& c) {
  timed_ = static_cast<uint64_t>(static_cast<int64_t>(timed_) + c.timed_asleep_delta);
  untimed_ = static_cast<uint64_t>(static_cast<int64_t>(untimed_) + c.untimed_asleep_delta);
  if (c.fell_asleep.empty()) return;
  if (in_list_.empty()) in_list_.assign(static_cast<size_t>(f.rows()) * f.cols(), 0);
  for (const uint32_t id : c.fell_asleep) {
    const uint64_t at = f.wakes_at(id);
    if (at != fabric::kNever) due_.emplace(at, id);
    if (!in_list_[id]) {
      in_list_[id] = 1;
      listed_.push_back(id);
    }
  }
}

}  // namespace wafersim::sim
