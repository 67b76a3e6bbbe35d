// A compute element on its router's ramp: the adapter that makes pe::ComputeElement a
// fabric::RampEndpoint. The two cycle contracts match one to one (docs/fabric.md,
// docs/compute_element.md): step = the CE's phase A, accept = its off-ramp delivery,
// finish_cycle latches its stall bits. `progressed` reports any CE progress (an
// instruction, a vector iteration, a pick, a wavelet), so long computations are not taken
// for deadlocks.
#pragma once

#include <string>
#include <vector>

#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/pe/compute_element.hpp"

namespace wafersim::sim {

class CeEndpoint final : public fabric::RampEndpoint {
 public:
  explicit CeEndpoint(const pe::CeConfig& cfg) : ce_(cfg) {}

  pe::ComputeElement& ce() { return ce_; }
  const pe::ComputeElement& ce() const { return ce_; }

  fabric::RampStep step(uint64_t cycle, fabric::ColorMask router_stall,
                        fabric::Wavelet& offer) override;
  void accept(const fabric::Wavelet& w, uint64_t /*cycle*/) override { ce_.accept_offramp(w); }
  void finish_cycle(uint64_t /*cycle*/) override { ce_.finish_cycle(); }
  fabric::ColorMask stall_to_router() const override { return ce_.stall_to_router(); }
  bool idle() const override { return ce_.idle(); }
  std::string describe() const override;
  void waits(std::vector<fabric::EndpointWait>& out) const override;

 private:
  pe::ComputeElement ce_;
};

}  // namespace wafersim::sim
