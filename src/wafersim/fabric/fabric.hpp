// The wavelet fabric: every router, the links between them (a Topology), the endpoints on
// ramps and border links, and one router's share of each phase of the cycle contract
// (docs/fabric.md). The simulator (sim/) decides which routers run in a cycle and in which
// threads; the fabric guarantees that a router's phase writes only that router's state.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "wafersim/fabric/cycle_counters.hpp"
#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/packet_routing.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/fabric/router.hpp"
#include "wafersim/fabric/topology.hpp"

namespace wafersim::fabric {

struct FabricConfig {
  Topology topology;
  int colors = 24;             // routable fabric colors; ids >= this are local [0096]
  int queue_depth = 2;         // per-color router queue [0317]; stall above depth-1 [0333]
  SchedulerPolicy scheduler = SchedulerPolicy::round_robin;
  int priority_split = 8;      // priority policy: colors below this go first [0320]
  bool packet_mode = false;    // NoC studies: route each wavelet by its `dest`
  PacketRouting packet_routing = PacketRouting::xy;

  void validate() const;  // throws ConfigError naming the field
};

class Fabric {
 public:
  explicit Fabric(const FabricConfig& config);

  const FabricConfig& config() const { return config_; }
  const Topology& topology() const { return config_.topology; }
  int rows() const { return config_.topology.rows; }
  int cols() const { return config_.topology.cols; }
  // Physical entries per queue: the configured depth, plus one skid entry when 2-cycle
  // diagonal links can have a second wavelet in flight when the stall arrives.
  int capacity() const { return capacity_; }
  // A queue holding more than this stalls its sources [0333].
  int stall_threshold() const { return config_.queue_depth - 1; }

  Router& router(uint32_t id) { return routers_[id]; }
  const Router& router(uint32_t id) const { return routers_[id]; }
  uint32_t router_count() const { return static_cast<uint32_t>(routers_.size()); }

  // --- routes (color mode): the static Dest and Src vectors of [0318], [0322] -----------
  // Replaces (set) or adds to (add) the masks of `color` at router `id`. Every direction
  // must exist at that router (a link, the ramp, or a border edge port). Throws RouteError.
  void set_route(uint32_t id, int color, DirMask dest, DirMask src);
  void add_route(uint32_t id, int color, DirMask dest, DirMask src);
  std::pair<DirMask, DirMask> route(uint32_t id, int color) const;
  // Removes every route of `color` (all colors when color < 0); their queues must be empty.
  void clear_routes(int color);
  // Bumped by every route change, so callers can tell when to check routes again.
  uint64_t routes_version() const { return routes_version_; }

  // --- endpoints on the ramp (port kRamp) or on a border link (an edge port) -------------
  void attach(uint32_t id, Dir port, RampEndpoint* endpoint);
  RampEndpoint* endpoint(uint32_t id, Dir port) const;
  PortAttachment* attachment(uint32_t id, Dir port);
  const PortAttachment* attachment(uint32_t id, Dir port) const;
  // Re-reads the stall bits of every attached endpoint (after the host changed them).
  void latch_endpoint_stalls();
  // Directions usable by routes at (r, c): links, ramp, border edge ports.
  DirMask usable_ports(int r, int c) const;

  // --- one router's part of each phase of a cycle -------------------------------------
  // Phase A: schedulers send from the stall bits of last cycle; endpoints step and may
  // offer. Returns true when something was put on a link to another router.
  bool phase_a(uint32_t id, uint64_t cycle, CycleCounters& counters);
  // Phase B: takes `router(id).arrivals` (set by the caller), the on-ramp and edge offers,
  // delivers the off-ramp, recomputes stall bits. Returns true if the router or one of its
  // endpoints has work next cycle.
  bool phase_b(uint32_t id, uint64_t cycle, CycleCounters& counters);
  // True when router `id` has queued wavelets or a busy endpoint.
  bool has_work(uint32_t id) const;

  // Calls f(target_id, input_dir) for each link wavelet router `id` sent in `cycle` on a
  // link taking `hop_cycles` cycles.
  template <class F>
  void for_each_target(uint32_t id, uint64_t cycle, int hop_cycles, F&& f) const {
    const Router& s = routers_[id];
    const int p = static_cast<int>(cycle & 1);
    if (s.out_cycle[p] != cycle) return;
    const int r = static_cast<int>(id / static_cast<uint32_t>(cols()));
    const int c = static_cast<int>(id % static_cast<uint32_t>(cols()));
    for (DirMask m = s.out_valid[p] & ~bit(kRamp); m; m &= m - 1) {
      const Dir o = first_dir(m);
      if (topology().hop_cycles(o) != hop_cycles) continue;
      const int64_t n = topology().neighbour(r, c, o);
      if (n >= 0) f(static_cast<uint32_t>(n), opposite(o));
    }
  }

  // Wavelets in the queue of `key` at `id`, oldest first.
  std::vector<Wavelet> queue_contents(uint32_t id, unsigned key) const;

 private:
  template <bool kPacket>
  bool phase_a_impl(uint32_t id, uint64_t cycle, CycleCounters& counters);
  template <bool kPacket>
  bool phase_b_impl(uint32_t id, uint64_t cycle, CycleCounters& counters);
  template <bool kPacket>
  bool output_blocked(const Router& r, int row, int col, Dir o, unsigned key,
                      const Wavelet& head) const;
  template <bool kPacket>
  void enqueue(Router& r, uint32_t id, const Wavelet& w, Dir from, uint64_t& arrived,
               uint8_t* arrived_from, CycleCounters& counters);
  void step_endpoint(Router& r, uint32_t id, PortAttachment& a, Dir port, uint64_t cycle,
                     CycleCounters& counters);
  void deliver(PortAttachment& a, const Wavelet& w, uint64_t cycle, CycleCounters& counters);
  void check_ports(uint32_t id, int color, DirMask dest, DirMask src) const;
  void apply_route(uint32_t id, int color, DirMask dest, DirMask src);

  FabricConfig config_;
  int capacity_;
  uint64_t high_priority_;  // colors the priority scheduler serves first
  std::vector<Router> routers_;
  // Edge attachments, sorted by key = id * 16 + direction.
  std::vector<std::pair<uint64_t, PortAttachment>> edges_;
  uint64_t routes_version_ = 0;
};

std::string router_name(const Topology& t, uint32_t id);  // "(r, c)"

}  // namespace wafersim::fabric
