#include "wafersim/sim/ce_endpoint.hpp"

#include <algorithm>

#include "wafersim/fabric/router.hpp"

namespace wafersim::sim {

using fabric::ColorMask;
using fabric::EndpointWait;

fabric::RampStep CeEndpoint::step(uint64_t cycle, fabric::ColorMask router_stall,
                                  fabric::Wavelet& offer) {
  const uint64_t before = ce_.progress();
  fabric::RampStep s;
  if (feeding_) [[unlikely]] feed_one();
  // Captured colors go to the host, which never stalls them.
  if (std::optional<fabric::Wavelet> w = ce_.step(cycle, router_stall & ~capture_)) {
    if ((capture_ >> w->color) & 1u) [[unlikely]] {
      captured_.push_back({*w, cycle});
    } else {
      offer = *w;
      offer.injected_cycle = static_cast<uint32_t>(cycle);  // latency counts from the on-ramp
      offer.hops = 0;
      s.offered = true;
    }
  }
  s.progressed = ce_.progress() != before;
  return s;
}

void CeEndpoint::feed(const fabric::Wavelet& w) {
  auto it = std::lower_bound(feeds_.begin(), feeds_.end(), w.color,
                             [](const Feed& f, uint8_t c) { return f.color < c; });
  if (it == feeds_.end() || it->color != w.color) {
    Feed f;
    f.color = w.color;
    it = feeds_.insert(it, std::move(f));
  }
  it->items.push_back(w);
  feeding_ |= ColorMask{1} << w.color;
  ++fed_;
}

// At the start of the CE's cycle, like a delivery at the end of the last one: one wavelet
// of a color the CE did not stall then, so the queue has room for it and for what the
// router may still deliver this cycle (a CE queue stalls with two entries free [0329]).
void CeEndpoint::feed_one() {
  const ColorMask candidates = feeding_ & ~ce_.stall_to_router();
  if (candidates == 0) return;
  const auto color = static_cast<uint8_t>(fabric::pick_round_robin(candidates, feed_last_));
  feed_last_ = color;
  auto it = std::lower_bound(feeds_.begin(), feeds_.end(), color,
                             [](const Feed& f, uint8_t c) { return f.color < c; });
  ce_.accept_offramp(it->items[it->head]);
  --fed_;
  if (++it->head == it->items.size()) {
    feeds_.erase(it);
    feeding_ &= ~(ColorMask{1} << color);
  }
}

std::vector<fabric::Arrival> CeEndpoint::captured(int color, bool take) {
  std::vector<fabric::Arrival> out, rest;
  for (const fabric::Arrival& a : captured_) {
    (a.wavelet.color == color ? out : rest).push_back(a);
  }
  if (take) captured_.swap(rest);
  return out;
}

std::string CeEndpoint::describe() const {
  // describe_wait() starts with the PE's name, which the report already gives.
  std::string d = ce_.describe_wait();
  const size_t colon = d.find(':');
  d = colon == std::string::npos ? d : "compute element" + d.substr(colon);
  if (fed_) {
    d += "\n  host stream: " + std::to_string(fed_) + " wavelet(s) waiting to enter (colors";
    for (ColorMask m = feeding_; m; m &= m - 1) (d += ' ') += std::to_string(std::countr_zero(m));
    d += ")";
  }
  return d;
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
