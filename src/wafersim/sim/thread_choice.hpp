// Whether a cycle big enough to share runs in several threads or in one: decided by
// measuring both on the machine at hand (docs/fabric.md, "Threads: one or several, by
// measurement").
//
// Two threads pay off only when the second one has a core: on a machine busy with other
// work, a thread that took rows and lost its core holds up the cycle, and rows that move
// between cores take their cache lines along, so sharing a cycle can cost more than
// running it alone; on an idle many-core machine sharing wins many times over. No fixed
// threshold is right for both. So the cycle loop times its cycles: it keeps the mode it
// prefers and, now and then, probes the other one for a few cycles, comparing wall time
// per unit of work (routers in the cycle's phase lists). A probe clearly slower than the
// preferred mode stops after one cycle; one faster by more than 5% switches modes. Probes
// come at growing intervals (64 cycles, doubling up to 4096) while they confirm the
// choice, so a run pays about one slow cycle in a few hundred, or less, for them. Which
// mode runs a cycle never changes a result, only its speed.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace wafersim::sim {

class ThreadChoice {
 public:
  // Whether the next cycle that may run in parallel does.
  bool parallel() const { return probing_ ? !prefer_parallel_ : prefer_parallel_; }

  // After such a cycle: how it ran, its work and its wall time.
  void record(bool parallel, uint64_t work, std::chrono::nanoseconds took) {
    const double ns = static_cast<double>(took.count());
    const double units = static_cast<double>(std::max<uint64_t>(work, 1));
    if (parallel != this->parallel()) return;  // (the caller ran what parallel() said)
    if (!probing_) {
      // The preferred mode's recent cost: sums decaying over about 32 cycles.
      pref_ns_ = pref_ns_ * kDecay + ns;
      pref_work_ = pref_work_ * kDecay + units;
      if (--until_probe_ == 0) {
        probing_ = true;
        probe_ns_ = probe_work_ = 0;
        probe_cycles_ = 0;
      }
      return;
    }
    probe_ns_ += ns;
    probe_work_ += units;
    ++probe_cycles_;
    const double pref_rate = pref_ns_ / pref_work_, probe_rate = probe_ns_ / probe_work_;
    const bool clearly_slower = probe_rate > 1.5 * pref_rate;
    if (probe_cycles_ < kProbeCycles && !clearly_slower) return;
    probing_ = false;
    if (!clearly_slower && probe_rate < 0.95 * pref_rate) {
      prefer_parallel_ = !prefer_parallel_;
      pref_ns_ = probe_ns_;
      pref_work_ = probe_work_;
      interval_ = kFirstInterval;
    } else {
      interval_ = std::min(2 * interval_, kLongestInterval);
    }
    until_probe_ = interval_;
  }

 private:
  static constexpr double kDecay = 31.0 / 32.0;
  static constexpr int kProbeCycles = 16;
  static constexpr uint64_t kFirstInterval = 64, kLongestInterval = 4096;

  bool prefer_parallel_ = true;  // sharing is tried first
  bool probing_ = false;
  uint64_t interval_ = kFirstInterval;
  uint64_t until_probe_ = kFirstInterval;  // cycles of the preferred mode before a probe
  double pref_ns_ = 0, pref_work_ = 0;
  double probe_ns_ = 0, probe_work_ = 0;
  int probe_cycles_ = 0;
};

}  // namespace wafersim::sim
