#include "wafersim/sim/ce_endpoint.hpp"

namespace wafersim::sim {

using fabric::EndpointWait;

fabric::RampStep CeEndpoint::step(uint64_t cycle, fabric::ColorMask router_stall,
                                  fabric::Wavelet& offer) {
  const uint64_t before = ce_.progress();
  fabric::RampStep s;
  if (std::optional<fabric::Wavelet> w = ce_.step(cycle, router_stall)) {
    offer = *w;
    offer.injected_cycle = static_cast<uint32_t>(cycle);  // latency counts from the on-ramp
    offer.hops = 0;
    s.offered = true;
  }
  s.progressed = ce_.progress() != before;
  return s;
}

std::string CeEndpoint::describe() const {
  // describe_wait() starts with the PE's name, which the report already gives.
  std::string d = ce_.describe_wait();
  const size_t colon = d.find(':');
  return colon == std::string::npos ? d : "compute element" + d.substr(colon);
}

void CeEndpoint::waits(std::vector<EndpointWait>& out) const {
  for (const pe::ComputeElement::Wait& w : ce_.waits()) {
    if (w.held_by >= 0) {
      out.push_back({EndpointWait::Kind::held, static_cast<uint8_t>(w.held_by), w.who});
      continue;
    }
    if (w.color < 0) continue;
    const bool local = w.color >= ce_.config().fabric_colors;  // never enters the router
    const auto color = static_cast<uint8_t>(w.color);
    if (w.cause == pe::StallCause::input_empty) {
      out.push_back({local ? EndpointWait::Kind::receive_local : EndpointWait::Kind::receive,
                     color, w.who});
    } else if (w.cause == pe::StallCause::output_full && !local) {
      out.push_back({EndpointWait::Kind::send, color, w.who});
    }
  }
}

}  // namespace wafersim::sim
