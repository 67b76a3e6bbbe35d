// The wavelet fabric: every router, the links between them (a Topology), the endpoints on
// ramps and border links, and one router's share of each phase of the cycle contract
// (docs/fabric.md). The simulator (sim/) decides which routers run in a cycle and in which
// threads; the fabric guarantees that a router's phase writes only that router's state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "wafersim/fabric/arrival_board.hpp"
#include "wafersim/fabric/cycle_counters.hpp"
#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/link_sends.hpp"
#include "wafersim/fabric/packet_planes.hpp"
#include "wafersim/fabric/packet_routing.hpp"
#include "wafersim/fabric/queue_arena.hpp"
#include "wafersim/fabric/ramp_endpoint.hpp"
#include "wafersim/fabric/route_paths.hpp"
#include "wafersim/fabric/route_switch.hpp"
#include "wafersim/fabric/router.hpp"
#include "wafersim/fabric/topology.hpp"
#include "wafersim/zeroed_pages.hpp"

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

  // Per-key stall toward every Src direction [0333], computed at the end of the last
  // phase B (packet mode: per input port).
  uint64_t stall_out(uint32_t id) const { return stall_out_[id]; }
  // The output register of router `id` toward `dir` written in phase A of `cycle`.
  const Wavelet& out_register(uint32_t id, uint64_t cycle, Dir dir) const {
    return out_[out_index(id, cycle, dir)];
  }

  // The queue and routing state of `key` (a color; packet mode: an input direction) at
  // router `id`; the key must be configured there.
  QueueSlot& slot(uint32_t id, unsigned key) { return queues_.slot(routers_[id].slot_index(key)); }
  const QueueSlot& slot(uint32_t id, unsigned key) const {
    return queues_.slot(routers_[id].slot_index(key));
  }
  // Calls f(slot) for each configured key of router `id`, in key order.
  template <class F>
  void for_each_slot(uint32_t id, F&& f) const {
    const Router& r = routers_[id];
    for (int i = 0; i < r.slot_count(); ++i) f(queues_.slot(r.slot_base + static_cast<uint32_t>(i)));
  }
  template <class F>
  void for_each_slot(uint32_t id, F&& f) {
    const Router& r = routers_[id];
    for (int i = 0; i < r.slot_count(); ++i) f(queues_.slot(r.slot_base + static_cast<uint32_t>(i)));
  }
  // Lays the queues out in router order again after route changes (before a run).
  void compact_queues() {
    if (queues_.unused() > 0) queues_.compact(routers_);
  }

  // Counter: wavelets that entered router `id`'s queues (router traversals). Packet mode
  // does not count them in the cycle loop: each is still queued or was forwarded.
  uint64_t router_traversals(uint32_t id) const;
  // Counter: wavelets router `id` sent toward `dir` (link counts). Packet mode does not
  // count link sends in the cycle loop: each entered the receiver's queue of that input.
  uint64_t sent_count(uint32_t id, Dir dir) const;
  // Zeroes every counter above, occupancy and the queues' forwarded counts.
  void reset_counters();

  Router& router(uint32_t id) { return routers_[id]; }
  const Router& router(uint32_t id) const { return routers_[id]; }
  uint32_t router_count() const { return static_cast<uint32_t>(routers_.size()); }

  // --- routes (color mode): the static Dest and Src vectors of [0318], [0322] -----------
  // Replaces (set) or adds to (add) the masks of `color` at router `id`. Every direction
  // must exist at that router (a link, the ramp, or a border edge port). Throws RouteError.
  // With a switch, these are its position 0.
  void set_route(uint32_t id, int color, DirMask dest, DirMask src);
  void add_route(uint32_t id, int color, DirMask dest, DirMask src);
  std::pair<DirMask, DirMask> route(uint32_t id, int color) const;
  // Adds `masks` to the routes of `color`, all or none: every router's directions are
  // checked first, and, unless `allow_shared_source`, that no router gets a second source
  // for the color beside one it already has (only one may be active at a time [0302]; the
  // caller who shares a source promises that). Throws RouteError / ConfigError.
  void add_routes(int color, const RouteMasks& masks, bool allow_shared_source);
  // The routable colors with a route at any of `ids` (bit k: color k); 0 in packet mode.
  uint64_t routed_colors(std::span<const uint32_t> ids) const;
  // Removes every route of `color` (all colors when color < 0), and their switches; their
  // queues must be empty.
  void clear_routes(int color);

  // --- runtime switches (color mode; route_switch.hpp, fabric_switches.cpp) -------------
  // Gives `color` at router `id` the positions 1..n (n <= kMaxSwitchPositions) beside its
  // route (position 0), starting in `start`, wrapping to 0 after n when `ring`. The color
  // needs a route there and an empty queue. Throws RouteError / ConfigError.
  void set_switch(uint32_t id, int color, std::span<const SwitchPosition> positions, bool ring,
                  int start);
  void clear_switch(uint32_t id, int color);  // nothing to do without a switch
  const RouteSwitch* route_switch(uint32_t id, int color) const;  // nullptr: none
  // Dest and Src over every position of the color's switch (without one: the route).
  std::pair<DirMask, DirMask> route_union(uint32_t id, int color) const;
  // Colors with a switch at some router: their control wavelets carry switch commands.
  ColorMask switched_colors() const { return switched_colors_; }
  // Bumped by every route change, so callers can tell when to check routes again.
  uint64_t routes_version() const { return routes_version_; }

  // --- endpoints on the ramp (port kRamp) or on a border link (an edge port) -------------
  void attach(uint32_t id, Dir port, RampEndpoint* endpoint);
  RampEndpoint* endpoint(uint32_t id, Dir port) const;
  PortAttachment* attachment(uint32_t id, Dir port);
  const PortAttachment* attachment(uint32_t id, Dir port) const;
  // Re-reads the stall bits of every attached endpoint, and what the packet-mode loop
  // keeps of its host ports (after the host changed them).
  void latch_endpoint_stalls();
  // Directions usable by routes at (r, c): links, ramp, border edge ports.
  DirMask usable_ports(int r, int c) const;

  // --- a run: the simulator brackets its cycles with these ---------------------------
  // Packet mode with the default queues keeps its queue state in bit planes while a run
  // goes on (PacketPlanes): begin_run builds them from the queues, end_run writes them
  // back (also after an error). Between the two, only the phases below may touch queues
  // and routers. Elsewhere both do nothing.
  void begin_run();
  void end_run();
  // Packet mode: whether runs use the bit-plane pass where it applies (default) or the
  // general one; the same results either way (tests compare them). Between runs only.
  // Returns whether the bit-plane pass is now in use.
  bool set_packet_bit_planes(bool on);

  // --- one row's part of each phase of a cycle ----------------------------------------
  // A row's routers as a bit set over its columns (bit c of word c / 64).
  size_t row_words() const { return arrivals_.words_per_row(); }
  // Phase A for the routers of `row` whose bit is set in `active`, in column order:
  // schedulers send from the stall bits of last cycle; endpoints step and may offer.
  // Wavelets put on links are posted for their receivers' phase B. Returns what went out.
  struct RowSends {
    bool links = false;       // a wavelet went on a link to another router
  };
  RowSends phase_a_row(int row, const uint64_t* active, uint64_t cycle, CycleCounters& counters);
  // Phase B for the routers of `row` that are in `active` or receive a wavelet this cycle
  // (sent this cycle, or last cycle on 2-cycle links), in column order: enqueue arrivals
  // and on-ramp / edge offers, deliver the off-ramp, recompute stall bits. Sets in
  // `next_active` (all zero on entry) the routers with work next cycle. Returns how many
  // routers it processed; `next_count` gets how many are in `next_active`.
  uint32_t phase_b_row(int row, const uint64_t* active, uint64_t* next_active, uint64_t cycle,
                       CycleCounters& counters, uint32_t& next_count);
  // True when router `id` has queued wavelets or a busy endpoint.
  bool has_work(uint32_t id) const;

  // --- sleeping ramp endpoints (RampEndpoint::sleep_span; docs/fabric.md) -------------
  // In color mode a ramp endpoint that will only count for a while sleeps: phase B stops
  // stepping it and its router may leave the active set. The phases wake it when they
  // deliver to it and (phase A) when its timed sleep ends, the simulator having put its
  // router back in the active set; the simulator wakes all at the end of a run.
  // On by default; between runs only.
  void set_endpoint_sleep(bool on) { endpoint_sleep_ = on; }
  bool endpoint_sleep() const { return endpoint_sleep_; }
  // The first cycle the ramp endpoint of `id` sleeps through (kNever: it is awake), and
  // the cycle it wakes at (kNever: when a wavelet is delivered to it).
  uint64_t asleep_from(uint32_t id) const { return sleep_from_[id]; }
  uint64_t wakes_at(uint32_t id) const { return sleep_until_[id]; }
  // Wakes the sleeping ramp endpoint of `id`, counting its cycles before `now`; returns
  // how many it counted.
  uint64_t wake_endpoint(uint32_t id, uint64_t now);

  // The router across existing link `o` of router `id` in row `row` (index arithmetic:
  // callers know the link exists).
  uint32_t link_target(uint32_t id, int row, Dir o) const {
    int64_t n = static_cast<int64_t>(id) + link_delta_[o];
    if (topology().loop) {
      if (o == kN && row == rows() - 1) n -= topology().size();
      else if (o == kS && row == 0) n += topology().size();
    }
    return static_cast<uint32_t>(n);
  }
  // Link directions that lead from a router in row `from` to one in row `to`.
  DirMask directions_between_rows(int from, int to) const;

  // --- a wafer split into domains of rows (row_cut.cpp, docs/scale.md) ----------------
  // What phase A sent from row `from_row` to the neighbouring row `to_row` that phase B
  // of `cycle` reads (arrival posts, read and cleared here, and output registers; packet
  // mode: the sending row's LinkSends block and registers of `cycle`), in
  // cut_sends_bytes() bytes; import writes it into the receiving domain's copy. Stall rows are what the
  // next phase A reads of a neighbouring row, and so are the holds of its switched slots
  // (row_switch_slots() words). With loop links, 3 rows or more (ConfigError otherwise);
  // packet mode runs its general pass, not the bit-plane one (Simulator::start_run).
  size_t cut_sends_bytes() const;
  // Returns the bytes written: 0 when nothing crossed the cut (no arrival posted; the
  // receiving row reads no output register then), else cut_sends_bytes().
  size_t export_cut_sends(int from_row, int to_row, uint64_t cycle, uint8_t* out);
  // `bytes`: what export_cut_sends returned (0: nothing crossed; the posts are cleared).
  void import_cut_sends(int from_row, int to_row, uint64_t cycle, const uint8_t* in,
                        size_t bytes);
  // A row's stall bits (cols() words, one per router): what the neighbouring rows' next
  // phase A reads; a domain writes its copy of a neighbour's border row here.
  uint64_t* stall_row(int row) { return &stall_out_[stall_row_at(row)]; }
  const uint64_t* stall_row(int row) const { return &stall_out_[stall_row_at(row)]; }
  size_t stall_row_words() const { return (static_cast<size_t>(cols()) + 63) / 64; }
  size_t row_switch_slots(int row) const;
  void export_row_holds(int row, uint64_t* out) const;  // row_switch_slots(row) words
  void import_row_holds(int row, const uint64_t* in);
  // The state a run changes of the runtime switches on the rows that `owned` marks (one
  // byte per row; empty: every row): their positions and counts, kSwitchStateWords words
  // per switch. The other domains of a split wafer write it into their copy
  // (import_switch_states), so that every domain reads a switch as the one that holds it
  // does (docs/scale.md). The domains configured the same switches; WaferError when the
  // words say otherwise.
  static constexpr size_t kSwitchStateWords = 3 + kMaxSwitchPositions + 1;
  std::vector<uint64_t> export_switch_states(const std::vector<uint8_t>& owned) const;
  void import_switch_states(std::span<const uint64_t> words);
  void check_cut(int from_row, int to_row) const;

  // Wavelets in the queue of `key` at `id`, oldest first.
  std::vector<Wavelet> queue_contents(uint32_t id, unsigned key) const;

 private:
  // One row's pass through a phase, with the fabric's arrays and the row's link steps at
  // hand: color routing (fabric_cycle.cpp) and packet mode (fabric_packet_cycle.cpp).
  // What both passes have at hand: the row, the cycle, and the fabric's arrays.
  struct RowFrame {
    RowFrame(Fabric& f, int row, uint64_t cycle, CycleCounters& counters);
    Fabric& f_;
    const int row_;
    const uint32_t row_base_;  // id of the row's first router
    const uint64_t cycle_;
    CycleCounters& counters_;
    Router* const routers_;
    QueueSlot* const slots_;
    Wavelet* const entries_;
    uint64_t* const stall_out_;
  };
  class RowPass;
  template <int kCapacity>
  class PacketRowPass;
  class PlaneRowPass;
  bool plane_phase_a_row(int row, uint64_t cycle, CycleCounters& counters);
  uint32_t plane_phase_b_row(int row, const uint64_t* active, uint64_t* next_active,
                             uint64_t cycle, CycleCounters& counters, uint32_t& next_count);
  bool packet_phase_a_row(int row, const uint64_t* active, uint64_t cycle,
                          CycleCounters& counters);
  uint32_t packet_phase_b_row(int row, const uint64_t* active, uint64_t* next_active,
                              uint64_t cycle, CycleCounters& counters, uint32_t& next_count);
  int cut_source(int from_row, int to_row) const;  // the arrival-board class of a cut
  size_t stall_row_at(int row) const;  // the index of a row's first stall word (checked)
  size_t export_packet_cut(int from_row, int to_row, uint64_t cycle, uint8_t* out);
  void import_packet_cut(int from_row, int to_row, uint64_t cycle, const uint8_t* in,
                         size_t bytes);
  void check_ports(uint32_t id, int color, DirMask dest, DirMask src) const;
  void apply_route(uint32_t id, int color, DirMask dest, DirMask src);
  RouteSwitch* switch_of(const QueueSlot& s) {
    return s.switch_id == kNoSwitch ? nullptr : &switches_[s.switch_id];
  }
  void drop_switch(QueueSlot& s);

  FabricConfig config_;
  int capacity_;
  uint64_t high_priority_;  // colors the priority scheduler serves first
  PacketRouteTable packet_routes_;  // packet mode: the routing function, tabulated
  int64_t link_delta_[kNumDirs] = {};  // router-id step of each link direction
  int link_dcol_[kNumDirs] = {};       // column step of each link direction
  std::vector<Router> routers_;
  QueueArena queues_;
  // Packet mode: per router, the slot position of each input direction's queue, 4 bits per
  // direction (the queues never change, so the cycle loop looks positions up).
  std::vector<uint64_t> packet_slots_;
  // Packet mode: each router's host port on the ramp, and what the cycle loop needs of it
  // on the cycles it only waits (HostPort::quiet_until), in compact arrays: the loop reads
  // the wake cycle of every router on every cycle, the rest only when the port acts, and
  // the port itself only then.
  struct PacketHost {
    HostPort* host = nullptr;
    // What the port's next step will read besides the port (HostPort::next_reads): the
    // cycle loop fetches it into cache ahead of time.
    const void* fifo = nullptr;
    const void* wavelet = nullptr;
    // The port's step at `cycle` under `stall` (packet_pass_common.hpp; both packet passes).
    RampStep step(uint64_t cycle, ColorMask stall, Wavelet& w);
  };
  std::vector<PacketHost> packet_hosts_;
  // Per router: before this cycle its host port's step() only waits for a release,
  // reporting progress; kNever: no port, or an idle one (no work, no progress).
  std::vector<uint64_t> packet_wake_;
  // Sets router `id`'s wake from its host port: kNever when idle, else 0 (the next cycle
  // steps the port and learns when it next acts); and its read-ahead addresses.
  void refresh_packet_wake(uint32_t id);
  // Packet mode with queue depth 2 and no skid entry runs on bit planes (PacketPlanes);
  // `planes_live_` while a run holds the state there.
  bool use_planes_ = false;
  bool planes_fit_ = false;  // the configuration allows the bit-plane pass
  bool planes_live_ = false;
  PacketPlanes planes_;
  void load_planes();
  void store_planes();
  // Runtime switches, by QueueSlot::switch_id; a removed one leaves an unused entry.
  std::vector<RouteSwitch> switches_;
  ColorMask switched_colors_ = 0;
  ZeroedArray<uint64_t> stall_out_;  // per router, read by its neighbours in phase A
  // Per router: its ramp endpoint's sleep (asleep_from, wakes_at).
  std::vector<uint64_t> sleep_from_, sleep_until_;
  bool endpoint_sleep_ = true;
  // Wavelets sent, by direction then router: a row's senders count into one run of
  // consecutive words (rather than a cache line of each Router).
  // (These arrays and out_ start as untouched zero pages: a wafer split over processes
  // never touches the other ranks' rows of them, an idle region of a fabric neither.)
  ZeroedArray<uint64_t> sent_count_;
  ArrivalBoard arrivals_;            // phase A posts link arrivals for phase B
  LinkSends link_sends_;             // packet mode: the same, as bit sets per row
  int arrival_offset_[kNumDirs] = {};  // cycles from sending on a link to its arrival, - 1
  // Output registers: one set per router, two (by cycle parity) when 2-cycle diagonal
  // links must hold last cycle's wavelet while the next is written.
  // Laid out by direction, then router: a row of receivers reads consecutive registers.
  ZeroedArray<Wavelet> out_;
  size_t out_sets_ = 1;
  size_t out_stride_ = 0;  // routers
  size_t out_index(uint32_t id, uint64_t cycle, Dir dir) const {
    return (static_cast<size_t>(dir) * out_sets_ + (cycle & (out_sets_ - 1))) * out_stride_ + id;
  }
  // Edge attachments, sorted by key = id * 16 + direction.
  std::vector<std::pair<uint64_t, PortAttachment>> edges_;
  uint64_t routes_version_ = 0;
};

std::string router_name(const Topology& t, uint32_t id);  // "(r, c)"

}  // namespace wafersim::fabric
