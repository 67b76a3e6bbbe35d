// A compute element on its router's ramp: the adapter that makes pe::ComputeElement a
// fabric::RampEndpoint. The two cycle contracts match one to one (docs/fabric.md,
// docs/compute_element.md): step = the CE's phase A, accept = its off-ramp delivery,
// finish_cycle latches its stall bits. `progressed` reports any CE progress (an
// instruction, a vector iteration, a pick, a wavelet), so long computations are not taken
// for deadlocks.
//
// Host streams (docs/fabric.md, "Host streams into and out of compute elements"): the host
// may put wavelets straight into the CE's input queue of a color, as if the router had
// sent them down the off-ramp (one per cycle, in order per color, only while the CE does
// not stall the color), and may take what the CE sends on a color instead of the router.
#pragma once

#include <string>
#include <vector>

#include "wafersim/fabric/host_port.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/pe/compute_element.hpp"

namespace wafersim::sim {

static_assert(pe::ComputeElement::kUntilWavelet == fabric::RampEndpoint::kUntilDelivery);

// Aligned to a cache line, so that the words one cycle reads (the first few members here
// and in pe::ComputeElement) fill as few lines as they can.
class alignas(64) CeEndpoint final : public fabric::RampEndpoint {
 public:
  // `memory`: the PE memory's storage (pe::ComputeElement).
  CeEndpoint(const pe::CeConfig& cfg, uint8_t* memory) : ce_(cfg, memory) {}

  pe::ComputeElement& ce() { return ce_; }
  const pe::ComputeElement& ce() const { return ce_; }

  fabric::RampStep step(uint64_t cycle, fabric::ColorMask router_stall,
                        fabric::Wavelet& offer) override;
  void accept(const fabric::Wavelet& w, uint64_t /*cycle*/) override { ce_.accept_offramp(w); }
  void finish_cycle(uint64_t /*cycle*/) override { ce_.finish_cycle(); }
  fabric::ColorMask stall_to_router() const override { return ce_.stall_to_router(); }
  bool idle() const override { return fed_ == 0 && ce_.idle(); }
  // A CE sleeps through a quiet stall or a bulk operation (its kUntilWavelet is the
  // fabric's kUntilDelivery); not while a host stream still feeds it.
  uint64_t sleep_span() const override { return feeding_ ? 0 : ce_.sleep_span(); }
  void catch_up(uint64_t first, uint64_t n) override { ce_.catch_up(first, n); }
  std::string describe() const override;
  void waits(std::vector<fabric::EndpointWait>& out) const override;
  // Its output queues toward the router (captured colors go to the host instead).
  fabric::ColorMask offering() const override { return ce_.output_colors() & ~capture_; }

  // ---- host streams ------------------------------------------------------------------
  // Queues `w` for the CE's input queue of its color (a fabric color).
  void feed(const fabric::Wavelet& w);
  size_t fed_pending() const { return fed_; }
  // Colors whose wavelets the CE sends go to the host (taken with take_captured).
  void set_capture(fabric::ColorMask colors) { capture_ = colors; }
  fabric::ColorMask capture() const { return capture_; }
  size_t captured_count() const { return captured_.size(); }
  // What the CE sent on `color` to the host and was not taken yet, oldest first; `take`
  // removes it.
  std::vector<fabric::Arrival> captured(int color, bool take);

 private:
  void feed_one();

  // (Read every cycle, so next to the CE's own first words.)
  fabric::ColorMask feeding_ = 0;    // colors with wavelets still to enter
  fabric::ColorMask capture_ = 0;
  size_t fed_ = 0;                   // wavelets still to enter
  pe::ComputeElement ce_;
  struct Feed {  // one color's host stream, in order
    uint8_t color = 0;
    size_t head = 0;
    std::vector<fabric::Wavelet> items;
  };
  std::vector<Feed> feeds_;          // sorted by color
  uint8_t feed_last_ = 63;           // round-robin pointer over the colors
  std::vector<fabric::Arrival> captured_;
};

}  // namespace wafersim::sim
