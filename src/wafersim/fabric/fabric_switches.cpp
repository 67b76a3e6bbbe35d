// Configuration of runtime switches (route_switch.hpp, docs/fabric.md "Switches"). The
// cycle loop moves them (fabric_cycle.cpp); this is where they are set, read and removed.
#include <algorithm>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

namespace {

void recompute_switched_colors(const std::vector<RouteSwitch>& switches, ColorMask& out) {
  out = 0;
  for (const RouteSwitch& sw : switches) {
    if (sw.router != kNoSwitch) out |= ColorMask{1} << sw.color;
  }
}

}  // namespace

void Fabric::set_switch(uint32_t id, int color, std::span<const SwitchPosition> positions,
                        bool ring, int start) {
  check_ports(id, color, 0, 0);  // packet mode, router and color
  const std::string where =
      "switch of color " + std::to_string(color) + " at router " + router_name(topology(), id);
  const int n = static_cast<int>(positions.size());
  if (n < 1 || n > kMaxSwitchPositions) {
    throw ConfigError(where + ": give 1.." + std::to_string(kMaxSwitchPositions) +
                      " positions beside the route (position 0), got " + std::to_string(n));
  }
  for (int p = 0; p < n; ++p) {
    const SwitchPosition& s = positions[static_cast<size_t>(p)];
    if (s.mask == 0) {
      throw ConfigError(where + ": position " + std::to_string(p + 1) + " sets " +
                        (s.rx ? "rx" : "tx") + " to no direction");
    }
    check_ports(id, color, s.rx ? 0 : s.mask, s.rx ? s.mask : 0);
  }
  if (start < 0 || start > n) {
    throw ConfigError(where + ": start must be a position 0.." + std::to_string(n) + ", got " +
                      std::to_string(start));
  }
  Router& rt = routers_[id];
  if (!rt.has(static_cast<unsigned>(color))) {
    throw RouteError(where + ": the color has no route there; set its route (position 0) "
                     "first");
  }
  QueueSlot& slot = queues_.slot(rt.slot_index(static_cast<unsigned>(color)));
  if (slot.count != 0) {
    throw RouteError(where + ": wavelets of the color are queued there; set switches between "
                     "runs, on empty queues");
  }
  const auto [route_dest, route_src] = route(id, color);
  RouteSwitch sw;
  sw.router = id;
  sw.color = static_cast<uint8_t>(color);
  sw.last = static_cast<uint8_t>(n);
  sw.start = static_cast<uint8_t>(start);
  sw.ring = ring;
  sw.pos_in = sw.pos_out = static_cast<uint8_t>(start);
  std::copy(positions.begin(), positions.end(), sw.positions.begin());
  sw.rebuild(route_dest, route_src);
  if (slot.switch_id == kNoSwitch) {
    slot.switch_id = static_cast<uint32_t>(switches_.size());
    for (uint32_t i = 0; i < switches_.size(); ++i) {  // reuse a removed switch's entry
      if (switches_[i].router == kNoSwitch) {
        slot.switch_id = i;
        break;
      }
    }
    if (slot.switch_id == switches_.size()) switches_.emplace_back();
  }
  switches_[slot.switch_id] = sw;
  slot.dest = sw.dest[sw.pos_out];
  slot.src = sw.src[sw.pos_in];
  slot.hold = sw.held(sw.pos_in);
  recompute_switched_colors(switches_, switched_colors_);
  ++routes_version_;
}

void Fabric::clear_switch(uint32_t id, int color) {
  check_ports(id, color, 0, 0);
  const Router& rt = routers_[id];
  if (!rt.has(static_cast<unsigned>(color))) return;
  QueueSlot& slot = queues_.slot(rt.slot_index(static_cast<unsigned>(color)));
  const RouteSwitch* sw = switch_of(slot);
  if (sw == nullptr) return;
  if (slot.count != 0) {
    throw RouteError("cannot remove the switch of color " + std::to_string(color) +
                     " at router " + router_name(topology(), id) +
                     " while wavelets are queued there");
  }
  slot.dest = sw->dest[0];
  slot.src = sw->src[0];
  drop_switch(slot);  // (and its hold)
  ++routes_version_;
}

void Fabric::drop_switch(QueueSlot& s) {
  if (s.switch_id == kNoSwitch) return;
  switches_[s.switch_id].router = kNoSwitch;
  s.switch_id = kNoSwitch;
  s.hold = 0;
  recompute_switched_colors(switches_, switched_colors_);
}

const RouteSwitch* Fabric::route_switch(uint32_t id, int color) const {
  if (id >= routers_.size() || color < 0 || color >= kMaxColorIds || config_.packet_mode) {
    return nullptr;
  }
  const Router& rt = routers_[id];
  if (!rt.has(static_cast<unsigned>(color))) return nullptr;
  const QueueSlot& s = slot(id, static_cast<unsigned>(color));
  return s.switch_id == kNoSwitch ? nullptr : &switches_[s.switch_id];
}

// Per switch: its entry in switches_, its router, its color and two positions, then the
// counts of what it forwarded in each position.
std::vector<uint64_t> Fabric::export_switch_states(const std::vector<uint8_t>& owned) const {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < switches_.size(); ++i) {
    const RouteSwitch& sw = switches_[i];
    if (sw.router == kNoSwitch) continue;
    const size_t row = sw.router / static_cast<uint32_t>(cols());
    if (!owned.empty() && !owned[row]) continue;
    out.push_back(i);
    out.push_back(sw.router);
    out.push_back(uint64_t{sw.color} | (uint64_t{sw.pos_in} << 8) | (uint64_t{sw.pos_out} << 16));
    out.insert(out.end(), sw.forwarded.begin(), sw.forwarded.end());
  }
  return out;
}

void Fabric::import_switch_states(std::span<const uint64_t> words) {
  auto differ = [](const std::string& what) {
    throw WaferError("the domains' runtime switches differ (" + what +
                     "): every process must configure the same switches");
  };
  if (words.size() % kSwitchStateWords != 0) {
    differ(std::to_string(words.size()) + " words of switch state");
  }
  for (size_t at = 0; at < words.size(); at += kSwitchStateWords) {
    const uint64_t i = words[at], id = words[at + 1], packed = words[at + 2];
    const unsigned color = packed & 0xFF, pos_in = (packed >> 8) & 0xFF,
                   pos_out = (packed >> 16) & 0xFF;
    if (i >= switches_.size() || switches_[i].router != id || switches_[i].color != color ||
        pos_in > switches_[i].last || pos_out > switches_[i].last || (packed >> 24) != 0) {
      differ("switch " + std::to_string(i) + " of color " + std::to_string(color) +
             " at router id " + std::to_string(id));
    }
    RouteSwitch& sw = switches_[i];
    sw.pos_in = static_cast<uint8_t>(pos_in);
    sw.pos_out = static_cast<uint8_t>(pos_out);
    std::copy_n(words.begin() + static_cast<std::ptrdiff_t>(at + 3), sw.forwarded.size(),
                sw.forwarded.begin());
    QueueSlot& s = slot(static_cast<uint32_t>(id), color);
    s.dest = sw.dest[sw.pos_out];
    s.src = sw.src[sw.pos_in];
    s.hold = sw.held(sw.pos_in);
  }
}

std::pair<DirMask, DirMask> Fabric::route_union(uint32_t id, int color) const {
  if (const RouteSwitch* sw = route_switch(id, color)) return {sw->dest_union(), sw->src_union()};
  return route(id, color);
}

}  // namespace wafersim::fabric
