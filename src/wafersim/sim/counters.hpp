// Fabric counters in array form (docs/fabric.md, "Counters"): filled into caller-owned
// buffers so large fabrics are copied once.
#pragma once

#include <cstdint>
#include <vector>

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::sim {

// out[id * kNumDirs + dir]: wavelets each router sent on each output direction.
void fill_link_counts(const fabric::Fabric& f, uint64_t* out);
// out[id]: wavelets each router enqueued (router traversals).
void fill_router_traversals(const fabric::Fabric& f, uint64_t* out);
// out_sum[id]: queued wavelets summed over cycles; out_max[id]: most queued at once.
void fill_occupancy(const fabric::Fabric& f, uint64_t* out_sum, uint32_t* out_max);

// Wavelets per (router, output direction, color), non-zero entries only (color mode).
struct ColorTraffic {
  std::vector<uint32_t> router;
  std::vector<uint8_t> dir;
  std::vector<uint8_t> color;
  std::vector<uint64_t> count;
};
ColorTraffic color_traffic(const fabric::Fabric& f);

}  // namespace wafersim::sim
