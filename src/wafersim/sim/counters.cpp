#include "wafersim/sim/counters.hpp"

namespace wafersim::sim {

using namespace wafersim::fabric;

void fill_link_counts(const Fabric& f, uint64_t* out) {
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    for (int d = 0; d < kNumDirs; ++d) {
      out[size_t{id} * kNumDirs + d] = f.sent_count(id, static_cast<Dir>(d));
    }
  }
}

void fill_router_traversals(const Fabric& f, uint64_t* out) {
  for (uint32_t id = 0; id < f.router_count(); ++id) out[id] = f.router_traversals(id);
}

void fill_occupancy(const Fabric& f, uint64_t* out_sum, uint32_t* out_max) {
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    out_sum[id] = f.router(id).occupancy_sum;
    out_max[id] = f.router(id).occupancy_max;
  }
}

ColorTraffic color_traffic(const Fabric& f) {
  ColorTraffic t;
  if (f.config().packet_mode) return t;
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    f.for_each_slot(id, [&](const QueueSlot& s) {
      // Every dequeued wavelet went to each Dest direction once; the head may have gone to
      // some of them already (Sent) [0319]. With a switch, each position counts its own.
      const RouteSwitch* sw = f.route_switch(id, s.key);
      auto forwarded = [&](Dir d) {
        if (sw == nullptr) return s.forwarded;
        uint64_t n = 0;
        for (int p = 0; p <= sw->last; ++p) {
          if (sw->dest[static_cast<size_t>(p)] & bit(d)) n += sw->forwarded[static_cast<size_t>(p)];
        }
        return n;
      };
      const DirMask dests = sw ? sw->dest_union() : s.dest;
      for (DirMask m = dests; m; m &= m - 1) {
        const Dir d = first_dir(m);
        const uint64_t n = forwarded(d) + ((s.sent & bit(d)) ? 1 : 0);
        if (n == 0) continue;
        t.router.push_back(id);
        t.dir.push_back(d);
        t.color.push_back(s.key);
        t.count.push_back(n);
      }
    });
  }
  return t;
}

}  // namespace wafersim::sim
