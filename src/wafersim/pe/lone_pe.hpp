// A test bench for one compute element: it drives the CE through exactly the cycle
// contract the fabric uses, with a minimal "router" that
//   * feeds injected wavelets per color into the off ramp (one per cycle, honouring the
//     CE's stall bits, so backpressure reaches the producer [0329]-[0330]);
//   * loops chosen colors from the on ramp back to the off ramp through a router queue of
//     `router_queue_depth` entries (the self-send of [0092]-[0093], [0413]);
//   * collects every other color in a sink (which tests may stall to fill output queues).
// Kernel writers use it to unit-test one PE's program; it is not a fabric model.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "wafersim/pe/compute_element.hpp"

namespace wafersim::pe {

struct SinkRecord {
  uint64_t cycle;  // the cycle the CE handed it to the on ramp
  fabric::Wavelet wavelet;
};

class LonePe {
 public:
  static constexpr int kMaxFabricColors = 32;

  LonePe(const CeConfig& cfg, fabric::ColorMask loopback, int router_queue_depth = 2);

  ComputeElement& ce() { return ce_; }
  const ComputeElement& ce() const { return ce_; }
  uint64_t cycle() const { return cycle_; }
  fabric::ColorMask loopback() const { return loopback_; }

  // Queues wavelets to arrive on `color`: the k-th is due at start + k * interval and is
  // delivered at the first cycle from then on in which the CE accepts that color.
  // `index` and `ctrl` are empty or as long as `data`.
  void inject(int color, std::span<const uint32_t> data, std::span<const uint16_t> index,
              std::span<const uint8_t> ctrl, uint64_t start, uint32_t interval);
  int pending_injections(int color) const;

  // A stalled sink refuses its color, so the CE's output queue for it fills [0337].
  void set_sink_stalled(int color, bool stalled);
  const std::vector<SinkRecord>& sink(int color) const;
  void clear_sinks();

  void run(uint64_t cycles);
  // Runs until the CE is idle and nothing is in flight or due; false if max_cycles ran
  // out first. Throws DeadlockError when nothing moved for `watchdog` cycles while no
  // injection was still due in the future. The watchdog's count carries over between
  // calls (so a long run may be cut into slices) until reset_watchdog().
  bool run_until_idle(uint64_t max_cycles, uint64_t watchdog);
  void reset_watchdog() { still_ = 0; last_progress_ = ~uint64_t{0}; }
  bool in_flight() const;

  std::string describe_wait() const;

 private:
  struct Pending {
    uint64_t due;
    fabric::Wavelet wavelet;
  };
  void check_color(int color, const char* what) const;
  void one_cycle();
  // Runs up to `limit` cycles at once when nothing can happen in them but the CE's
  // counting (ComputeElement::countable_cycles); returns how many (0: run one_cycle).
  uint64_t skip(uint64_t limit);
  bool future_injection() const;

  ComputeElement ce_;
  fabric::ColorMask loopback_;
  int depth_;
  std::array<std::deque<fabric::Wavelet>, kMaxFabricColors> router_q_;
  std::array<std::deque<Pending>, kMaxFabricColors> inject_q_;
  std::array<std::vector<SinkRecord>, kMaxFabricColors> sinks_;
  fabric::ColorMask sink_stalled_ = 0;
  fabric::ColorMask waiting_ = 0;  // colors with loopback or injected wavelets to deliver
  fabric::ColorMask stall_to_ramp_ = 0;
  int off_rr_ = 0;
  uint64_t cycle_ = 0;
  uint64_t deliveries_ = 0;
  uint64_t still_ = 0, last_progress_ = ~uint64_t{0};
};

}  // namespace wafersim::pe
