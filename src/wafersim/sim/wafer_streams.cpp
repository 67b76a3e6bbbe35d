// Host streams into and out of the compute elements of any PE (docs/fabric.md): the host
// feeds a CE's input queue of a color as if its router sent the wavelets down the
// off-ramp, and takes what a CE sends on a color instead of its router. Edge ports and
// host ports on free ramps stay the way in and out through the fabric.
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/sim/wafer.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

CeEndpoint& Wafer::stream_pe(uint32_t id, int color, const char* what) {
  const Topology& t = fabric_.topology();
  if (color < 0 || color >= fabric_.config().colors) {
    throw ConfigError(std::string(what) + ": color " + std::to_string(color) +
                      " is not a fabric color (0.." + std::to_string(fabric_.config().colors - 1) +
                      "); local colors never leave the PE [0096]");
  }
  if (id >= fabric_.router_count()) {
    throw ConfigError(std::string(what) + ": router id " + std::to_string(id) +
                      " is outside the " + t.describe());
  }
  auto it = ces_.find(id);
  if (it == ces_.end()) {
    throw ConfigError(std::string(what) + ": PE " + router_name(t, id) +
                      " has no program: load one first");
  }
  return *it->second;
}

void Wafer::feed_ces(std::span<const uint32_t> ids, int color, std::span<const uint32_t> data,
                     std::span<const uint16_t> index, std::span<const uint8_t> ctrl) {
  sim_.wake_sleepers();
  const char* what = "stream_h2d";
  if (index.size() != data.size() || ctrl.size() != data.size()) {
    throw ConfigError("stream_h2d: data, index and ctrl must have the same length");
  }
  if (ids.empty() ? !data.empty() : data.size() % ids.size() != 0) {
    throw ConfigError("stream_h2d: " + std::to_string(data.size()) + " wavelets do not split "
                      "evenly over " + std::to_string(ids.size()) + " PEs");
  }
  for (uint32_t id : ids) stream_pe(id, color, what);  // validate everything first
  for (uint8_t c : ctrl) {
    if (c > 1) throw ConfigError("stream_h2d: ctrl must be 0 or 1");
  }
  const size_t k = ids.empty() ? 0 : data.size() / ids.size();
  const uint64_t now = sim_.cycle();
  for (size_t i = 0; i < ids.size(); ++i) {
    CeEndpoint& ce = stream_pe(ids[i], color, what);
    for (size_t j = i * k; j < (i + 1) * k; ++j) {
      Wavelet w;
      w.color = static_cast<uint8_t>(color);
      w.data = data[j];
      w.index = index[j];
      w.ctrl = ctrl[j] != 0;
      w.injected_cycle = static_cast<uint32_t>(now);
      ce.feed(w);
    }
  }
}

void Wafer::set_ce_capture(std::span<const uint32_t> ids, int color, bool on) {
  sim_.wake_sleepers();
  for (uint32_t id : ids) stream_pe(id, color, "capture");
  const ColorMask b = ColorMask{1} << color;
  for (uint32_t id : ids) {
    CeEndpoint& ce = stream_pe(id, color, "capture");
    ce.set_capture(on ? ce.capture() | b : ce.capture() & ~b);
  }
}

Collected Wafer::captured(std::span<const uint32_t> ids, int color, bool take) {
  for (uint32_t id : ids) stream_pe(id, color, "stream_d2h");
  Collected out;
  for (uint32_t id : ids) {
    for (const Arrival& a : stream_pe(id, color, "stream_d2h").captured(color, take)) {
      out.router.push_back(id);
      out.port.push_back(kRamp);
      out.color.push_back(a.wavelet.color);
      out.data.push_back(a.wavelet.data);
      out.index.push_back(a.wavelet.index);
      out.ctrl.push_back(a.wavelet.ctrl ? 1 : 0);
      out.hops.push_back(0);
      out.injected.push_back(a.cycle);
      out.arrived.push_back(a.cycle);
    }
  }
  return out;
}

}  // namespace wafersim::sim
