// A wafer as the simulator runs it: the fabric, the endpoints on its ramps and border links
// (host ports, and a compute element on the ramp of every PE that has a program), and the
// cycle loop. Host I/O goes through whole arrays, never one wavelet per call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wafersim/fabric/fabric.hpp"
#include "wafersim/fabric/host_port.hpp"
#include "wafersim/pe/ce_config.hpp"
#include "wafersim/pe/ce_stats.hpp"
#include "wafersim/pe/memory_arena.hpp"
#include "wafersim/sim/ce_endpoint.hpp"
#include "wafersim/sim/simulator.hpp"

namespace wafersim::sim {

struct WaferConfig {
  fabric::FabricConfig fabric;
  int threads = 0;            // 0: OpenMP default
  uint64_t watchdog = 10000;  // cycles without progress before DeadlockError
};

// Equal-length columns, one row per wavelet to inject.
struct InjectBatch {
  std::span<const uint32_t> router;
  std::span<const uint8_t> port;    // fabric::kRamp, or the direction of a border edge port
  std::span<const uint8_t> color;
  std::span<const uint32_t> data;
  std::span<const uint16_t> index;
  std::span<const uint8_t> ctrl;
  std::span<const int64_t> release;  // cycle to release at; earlier than now means now
  std::span<const uint32_t> dest;    // packet mode: destination router; else empty
};

// What arrived at host ports, one entry per wavelet, ordered by arrival cycle then port.
struct Collected {
  std::vector<uint32_t> router;
  std::vector<uint8_t> port;
  std::vector<uint8_t> color;
  std::vector<uint32_t> data;
  std::vector<uint16_t> index;
  std::vector<uint8_t> ctrl;
  std::vector<uint16_t> hops;
  std::vector<uint64_t> injected;
  std::vector<uint64_t> arrived;
};

class Wafer {
 public:
  explicit Wafer(const WaferConfig& config);
  Wafer(const Wafer&) = delete;
  Wafer& operator=(const Wafer&) = delete;

  fabric::Fabric& fabric() { return fabric_; }
  const fabric::Fabric& fabric() const { return fabric_; }
  Simulator& simulator() { return sim_; }

  // Route consistency and cycles (RouteError), then attaches a host port wherever a route
  // starts or ends at a ramp or edge port that has no endpoint yet.
  void check_routes();

  void inject(const InjectBatch& batch);
  // Per-color sink capacity (0: unlimited) and drain period of a host port.
  void set_sink(uint32_t router, fabric::Dir port, uint32_t capacity, uint32_t drain_period);
  // Takes what arrived (router < 0: at every host port; else only at (router, port)).
  Collected collect(int64_t router, int port);
  uint64_t pending_injections() const;

  RunResult run(uint64_t max_cycles);
  // The same run in steps (Simulator::start_run): start_run, then simulator().advance until
  // it returns true, then finish_run (the simulator's result plus the host ports' waits).
  void start_run(uint64_t max_cycles);
  RunResult finish_run();

  // Counters since construction or the last reset (docs/fabric.md).
  void reset_counters();
  uint64_t counters_since() const { return counters_since_; }

  // --- compute elements (wafer_pes.cpp), created when a program is loaded --------------
  // Every call here that hands out or changes compute elements wakes the sleeping ones
  // first (Simulator::wake_sleepers): a paused run leaves them asleep, and the host must
  // see their counts up to date and may change them.
  // Parameters of compute elements created from now on; row, col, fabric_colors and the
  // RNG seed (config seed + router id) are set per PE. Throws ConfigError.
  void set_ce_config(const pe::CeConfig& cfg);
  const pe::CeConfig& ce_config() const { return ce_config_; }
  // Fresh compute elements on the ramps of routers `ids`, for a new program (replacing an
  // idle one, or an unused host port). ConfigError, before any change, in packet mode,
  // when a PE is busy, or when a host port on one of those ramps holds wavelets.
  void reset_ces(std::span<const uint32_t> ids);
  // What reset_ces checks first, without the change: the ConfigError of the first of
  // `ids` that cannot take a new program; and that id (-1: none), for the processes of a
  // split wafer to agree on one process's error (docs/scale.md).
  void check_reset_ces(std::span<const uint32_t> ids);
  int64_t first_unresettable_ce(std::span<const uint32_t> ids);
  pe::ComputeElement* ce(uint32_t id);  // nullptr: no program was loaded there
  const pe::ComputeElement* ce(uint32_t id) const;
  std::vector<uint32_t> ce_ids() const;  // ascending
  size_t ce_count() const { return ces_.size(); }
  // Records task spans in every compute element (for a trace), or stops.
  void set_ce_trace(bool on);
  // Statistics of each compute element for the last run(): counters since its start and
  // the spans recorded during it, handed to `f(id, stats)` one PE at a time in router
  // order (a large wafer never holds them all at once).
  void ce_run_stats(const std::function<void(uint32_t, const pe::CeStats&)>& f);
  // The same statistics as one table, in router order: for PE ids[i], its counters packed
  // (pe::pack_counters) in blob[ends[i-1] .. ends[i]), or, when the run recorded trace
  // spans or a profile in it, no bytes there and its whole statistics in `whole`. Built
  // by the wafer's threads, each packing a contiguous range of PEs (the same table for
  // any thread count): on a whole wafer this took a tenth of a run in one thread.
  struct RunStatsTable {
    std::vector<int64_t> ids, ends;
    std::string blob;
    std::vector<std::pair<uint32_t, pe::CeStats>> whole;
  };
  RunStatsTable ce_run_stats_table();
  // Counts busy cycles per instruction address in every CE from now on (or stops).
  void set_ce_profile(bool on);
  void reset_ce_stats(uint32_t id);

  // --- host streams into and out of compute elements (wafer_streams.cpp) ---------------
  // Queues wavelets of fabric color `color` for the input queues of the compute elements
  // `ids`: data, index and ctrl hold k = data.size() / ids.size() wavelets per PE, PE
  // ids[i] getting rows i*k .. i*k+k-1 in order. ConfigError, before any change, for a
  // PE without a program, a local color or columns that do not fit.
  void feed_ces(std::span<const uint32_t> ids, int color, std::span<const uint32_t> data,
                std::span<const uint16_t> index, std::span<const uint8_t> ctrl);
  // From now on (or no longer), what the compute elements `ids` send on `color` goes to
  // the host instead of their routers; it lasts across program loads.
  void set_ce_capture(std::span<const uint32_t> ids, int color, bool on);
  // What the compute elements `ids` sent to the host on `color` (router, color, data,
  // index, ctrl and the cycle it left the CE, as `arrived`), PE by PE in `ids` order,
  // oldest first; `take` removes it.
  Collected captured(std::span<const uint32_t> ids, int color, bool take);

 private:
  struct CeMark {  // a compute element's counters when run() started
    uint32_t id;
    const CeEndpoint* ce;  // ces_[id] (reset_ce drops the mark with the CE)
    std::unique_ptr<pe::CeCounters> counters;  // nullptr: all zero (it had not run yet)
    size_t task_spans = 0, microthread_spans = 0, id_events = 0;
    std::vector<uint64_t> busy_by_pc;
  };
  void mark_ce_stats();
  // This run's share of a CE's statistics: what was counted since its mark.
  pe::CeStats run_stats_of(const CeMark& m) const;
  // Whether the CE recorded no trace span and no profile since its mark (its run's
  // statistics are the counters alone); `now` may be nullptr (it never stepped).
  static bool counters_only(const CeMark& m, const pe::CeLiveStats* now);
  void check_reset_ce(uint32_t id) const;
  CeEndpoint& stream_pe(uint32_t id, int color, const char* what);
  void reset_ce(uint32_t id);
  fabric::HostPort& host_port(uint32_t router, fabric::Dir port);
  void prepare();
  void attach_endpoints();

  fabric::Fabric fabric_;
  Simulator sim_;
  std::map<uint64_t, std::unique_ptr<fabric::HostPort>> host_ports_;  // key: router*16+port
  // The PE memories, slot i for router i, one arena per memory size (declared before the
  // compute elements, which point into them).
  std::map<uint32_t, std::unique_ptr<pe::MemoryArena>> memories_;  // key: bytes per PE
  std::map<uint32_t, std::unique_ptr<CeEndpoint>> ces_;  // key: router id
  pe::CeConfig ce_config_;
  std::vector<CeMark> ce_marks_;  // ascending id
  uint64_t checked_version_ = fabric::kNever;
  uint64_t counters_since_ = 0;
};

}  // namespace wafersim::sim
