// Moving packet mode's queue state into bit planes for a run and back (packet_planes.hpp).
#include <bit>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/errors.hpp"

namespace wafersim::fabric {

namespace {
inline void set_bit(uint64_t* plane, int col) {
  plane[col >> 6] |= uint64_t{1} << (col & 63);
}
inline bool test_bit(const uint64_t* plane, int col) { return (plane[col >> 6] >> (col & 63)) & 1u; }

// The key of a router's slot at `position` (its rank among the keys), or -1.
int key_at(uint64_t keys, unsigned position) {
  for (unsigned i = 0; keys; keys &= keys - 1, ++i) {
    if (i == position) return std::countr_zero(keys);
  }
  return -1;
}
}  // namespace

void Fabric::begin_run() {
  if (!use_planes_) return;
  load_planes();
  planes_live_ = true;
}

void Fabric::end_run() {
  if (!planes_live_) return;
  store_planes();
  planes_live_ = false;
}

bool Fabric::set_packet_bit_planes(bool on) {
  if (planes_live_) throw WaferError("set_packet_bit_planes: not while a run is going on");
  use_planes_ = on && planes_fit_;
  return use_planes_;
}

void Fabric::load_planes() {
  PacketPlanes& p = planes_;
  const Topology& t = topology();
  const int n = p.count();
  p.clear_planes();
  for (int r = 0; r < t.rows; ++r) {
    for (int c = 0; c < t.cols; ++c) {
      const uint32_t id = t.id(r, c);
      const Router& rt = routers_[id];
      for (uint64_t m = rt.keys; m; m &= m - 1) {
        const auto d = static_cast<Dir>(std::countr_zero(m));
        const int k = p.index(d);
        const uint32_t si = rt.slot_index(d);
        const QueueSlot& s = queues_.slot(si);
        p.slot_of[p.at(k, id)] = si;
        p.forwarded[p.at(k, id)] = 0;
        for (int e = 0; e < 2; ++e) p.queue(k, id)[e] = queues_.entries(si)[e];
        if (s.count >= 1) set_bit(p.has_one(r, k), c);
        if (s.count >= 2) set_bit(p.has_two(r, k), c);
        if (s.head) set_bit(p.head(r, k), c);
        if (s.head ^ (s.count == 1)) set_bit(p.tail(r, k), c);
        if (s.count) set_bit(p.want(r, p.index(first_dir(s.dest)), k), c);
        if ((stall_out_[id] >> d) & 1u) set_bit(p.stall(r, k), c);
      }
      for (int o = 0; o < n; ++o) {
        const int key = key_at(rt.keys, rt.last_pick[p.dir(o)]);
        if (key >= 0) set_bit(p.last(r, o, p.index(static_cast<Dir>(key))), c);
      }
      p.queued[id] = rt.queued;
      p.occupancy_sum[id] = rt.occupancy_sum;
      p.occupancy_max[id] = rt.occupancy_max;
      if (packet_wake_[id] != kNever) set_bit(p.live(r), c);
      if (const HostPort* host = packet_hosts_[id].host) {
        set_bit(host->capacity() > 0 ? p.ramp_limited(r) : p.ramp_open(r), c);
      }
    }
  }
}

void Fabric::store_planes() {
  PacketPlanes& p = planes_;
  const Topology& t = topology();
  const int n = p.count();
  for (int r = 0; r < t.rows; ++r) {
    for (int c = 0; c < t.cols; ++c) {
      const uint32_t id = t.id(r, c);
      Router& rt = routers_[id];
      rt.busy = 0;
      rt.over = 0;
      uint64_t stall = 0;
      for (int k = 0; k < n; ++k) {
        const uint32_t si = p.slot_of[p.at(k, id)];
        if (si == PacketPlanes::kNoSlot) continue;
        const Dir d = p.dir(k);
        QueueSlot& s = queues_.slot(si);
        const int count = test_bit(p.has_one(r, k), c) + test_bit(p.has_two(r, k), c);
        s.count = static_cast<uint8_t>(count);
        s.head = static_cast<uint8_t>(test_bit(p.head(r, k), c));
        s.forwarded += p.forwarded[p.at(k, id)];
        for (int e = 0; e < 2; ++e) queues_.entries(si)[e] = p.queue(k, id)[e];
        s.dest = 0;
        for (int o = 0; o < n && count; ++o) {
          if (test_bit(p.want(r, o, k), c)) s.dest = bit(p.dir(o));
        }
        if (count) rt.busy |= uint64_t{1} << (si - rt.slot_base);
        if (count > 1) rt.over |= bit(d);
        if (test_bit(p.stall(r, k), c)) stall |= bit(d);
        for (int o = 0; o < n; ++o) {
          if (test_bit(p.last(r, o, k), c)) {
            rt.last_pick[p.dir(o)] = static_cast<uint8_t>(si - rt.slot_base);
          }
        }
      }
      stall_out_[id] = stall;
      rt.queued = p.queued[id];
      rt.occupancy_sum = p.occupancy_sum[id];
      rt.occupancy_max = p.occupancy_max[id];
    }
  }
}

}  // namespace wafersim::fabric
