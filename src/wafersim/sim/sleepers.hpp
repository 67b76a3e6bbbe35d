// The simulator's book of sleeping ramp endpoints (Fabric::asleep_from, docs/fabric.md
// "Sleeping endpoints"): how many sleep, which wake at a known cycle, and which ones slept
// since the book was last emptied, so that a run can wake them all when it ends or pauses.
//
// The phases put endpoints to sleep and wake those they deliver to, row by row, in
// parallel; they report it in their rows' CycleCounters, which the simulator hands here
// after each cycle, in row order. Everything here runs between cycles, in one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "wafersim/fabric/cycle_counters.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

class Sleepers {
 public:
  // How many endpoints sleep; a timed sleep's cycles are work for the watchdog.
  uint64_t count() const { return timed_ + untimed_; }
  uint64_t timed() const { return timed_; }
  // Cycles counted by the wakes done here (the phases count those of their deliveries);
  // `take` resets it.
  uint64_t take_slept_cycles() { return std::exchange(slept_cycles_, 0); }

  // A row's phase B put these to sleep and woke others (`c`).
  void note(const fabric::Fabric& f, const fabric::CycleCounters& c);

  // The timed sleepers whose sleep ends at cycle `now`, before its phase A: hands each
  // router id to `activate` (back into the active set) and stops counting it as asleep.
  // The endpoint itself wakes in its row's phase A (Fabric: a timed sleep that ends now),
  // in parallel with the other rows: counting its slept cycles can finish a bulk vector
  // operation, the arithmetic of all its counted iterations, which in this one thread
  // would hold up every other (docs/scale.md, "Threads that scale").
  template <class F>
  void wake_due(const fabric::Fabric& f, uint64_t now, F&& activate) {
    std::pair<uint64_t, uint32_t> last{fabric::kNever, 0};
    while (!due_.empty() && due_.top().first <= now) {
      const std::pair<uint64_t, uint32_t> entry = due_.top();
      due_.pop();
      const auto [at, id] = entry;
      // An endpoint woken earlier by a delivery leaves its entry behind; if it fell
      // asleep again until the same cycle (a bulk operation's end), it has two entries,
      // and (still asleep until phase A) is counted once.
      if (f.asleep_from(id) == fabric::kNever || f.wakes_at(id) != at || entry == last) continue;
      last = entry;
      --timed_;
      activate(id);
    }
  }

  // Wakes every sleeper, counting its cycles before `now`, and empties the book.
  template <class F>
  void wake_all(fabric::Fabric& f, uint64_t now, F&& activate) {
    if (listed_.empty()) return;  // (every call of the host's CE accessors asks)
    for (const uint32_t id : listed_) {
      in_list_[id] = 0;
      if (f.asleep_from(id) == fabric::kNever) continue;
      slept_cycles_ += f.wake_endpoint(id, now);
      activate(id);
    }
    listed_.clear();
    due_ = {};
    timed_ = untimed_ = 0;
  }

 private:
  uint64_t timed_ = 0, untimed_ = 0;
  uint64_t slept_cycles_ = 0;
  // (wake cycle, router id), soonest first.
  std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>,
                      std::greater<>>
      due_;
  // Routers whose endpoint slept since the book was emptied, each once.
  std::vector<uint32_t> listed_;
  std::vector<uint8_t> in_list_;  // by router id
};

}  // namespace wafersim::sim
