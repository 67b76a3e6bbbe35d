// The cycle loop: runs phase A then phase B of the cycle contract (docs/fabric.md) over the
// rows of the fabric, in parallel with OpenMP (in one thread, each row's phase B follows
// the phase A of the row above), touching only routers that have work (the active set),
// and watches for lack of progress [0306].
//
// Determinism: in each phase a router writes only its own state and reads only what other
// routers wrote in the other phase, and each row's lists are built from state alone, so
// results and cycle counts do not depend on the number of threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "wafersim/fabric/cycle_counters.hpp"
#include "wafersim/fabric/fabric.hpp"
#include "wafersim/sim/domain.hpp"
#include "wafersim/sim/row_team.hpp"
#include "wafersim/sim/row_work.hpp"
#include "wafersim/sim/sleepers.hpp"
#include "wafersim/sim/thread_choice.hpp"

namespace wafersim::sim {

struct RunResult {
  uint64_t start_cycle = 0;
  uint64_t cycles = 0;        // cycles simulated by this run
  bool quiescent = false;     // stopped because nothing was left to do
  uint64_t moves = 0;         // wavelet moves on any port
  uint64_t injected = 0;      // wavelets that entered the fabric
  uint64_t delivered = 0;     // wavelets that reached an endpoint
  uint64_t router_cycles = 0; // routers processed, summed over cycles (active-set work)
  uint64_t parallel_phases = 0;  // phases run by several OpenMP threads
  uint64_t slept_cycles = 0;     // endpoint cycles counted in bulk while asleep
  fabric::LatencyCounts latency;      // delivered wavelets by latency (from the stamp)
  std::vector<uint64_t> hop_hist;     // delivered wavelets by hops
  fabric::LatencyCounts queue_delay;  // wavelets that entered from host ports, by wait
                                      // (filled by sim::Wafer::finish_run)
};

class Simulator {
 public:
  explicit Simulator(fabric::Fabric& fabric);

  // 0: OpenMP's default thread count.
  void set_threads(int threads);
  int threads() const { return threads_; }
  // The threads a parallel cycle uses: threads(), or OpenMP's default when that is 0.
  int thread_count() const;
  // Raise DeadlockError after this many cycles without progress while work is pending.
  void set_watchdog(uint64_t cycles);
  uint64_t watchdog() const { return watchdog_; }
  // A cycle with fewer active routers runs in one thread (sharing it costs more); one
  // with more runs in one or several, whichever measures faster (thread_choice.hpp).
  // Setting it (the user's knob) turns the measuring off: such cycles then always run in
  // several threads. set_default_parallel_min_routers changes the floor unless the user
  // set it (a wafer with compute elements lowers it).
  void set_parallel_min_routers(size_t n) {
    parallel_min_routers_ = n;
    threads_forced_ = true;
  }
  void set_default_parallel_min_routers(size_t n) {
    if (!threads_forced_) parallel_min_routers_ = n;
  }
  size_t parallel_min_routers() const { return parallel_min_routers_; }
  // Chunks of rows per thread in a parallel cycle (row_chunks.cpp; 1..64, default 4):
  // enough for a thread done early to take whole chunks from another's end, few enough
  // that most phases B follow their rows' phases A closely. Results do not depend on it.
  void set_chunks_per_thread(int n);
  int chunks_per_thread() const { return chunks_per_thread_; }
  // How long a thread waiting for the next phase spins before it sleeps (row_team.hpp).
  void set_spin_wait(std::chrono::microseconds spin);
  std::chrono::microseconds spin_wait() const { return team_.spin(); }
  // Whether compute elements that only count may sleep (Fabric::set_endpoint_sleep):
  // faster, the same results. Between runs (WaferError during one).
  void set_endpoint_sleep(bool on);
  bool endpoint_sleep() const { return fabric_.endpoint_sleep(); }

  uint64_t cycle() const { return cycle_; }
  // Wavelets in router queues.
  int64_t queued() const { return queued_; }

  // Runs until nothing is left to do or `max_cycles` cycles have passed. Throws
  // DeadlockError (watchdog) or RouteError (e.g. two active sources [0302]); after a
  // RouteError the fabric is left mid-cycle and further runs are refused.
  RunResult run(uint64_t max_cycles);

  // The same run in steps, so that the host can look for interrupts in between:
  // start_run, then advance until it returns true, then finish_run. advance returns false
  // when the wall clock passes `pause_at` (looked at every few hundred cycles, or every
  // cycle on a large fabric), between two cycles; the next advance goes on from there, and
  // results do not depend on where a run paused. While paused, the compute elements can be
  // read after wake_sleepers (packet-mode routers may still hold their run-time form).
  // finish_run also ends a paused run early (its statistics then cover the cycles so far);
  // an error thrown by advance ends the run by itself.
  using Clock = std::chrono::steady_clock;
  void check_can_run() const;  // WaferError after a RouteError, or while a run is open
  void start_run(uint64_t max_cycles);
  bool advance(Clock::time_point pause_at);
  RunResult finish_run();
  bool run_open() const { return run_open_; }

  // Whether a previous run ended in an error that left the state mid-cycle.
  bool broken() const { return broken_; }

  // A wafer split into domains of rows (domain.hpp): this simulator steps only the rows
  // of `blocks` (ascending, disjoint [lo, hi) ranges), and `exchange` joins it to the
  // other domains every cycle. nullptr: the whole wafer (the default). Between runs.
  void set_domain(const std::vector<std::pair<int, int>>& blocks, int index,
                  CutExchange* exchange);
  const std::vector<std::pair<int, int>>& domain_blocks() const { return domain_blocks_; }

  // Wakes every sleeping endpoint (Fabric::asleep_from), counting its cycles so far. A
  // run does so when it ends; a paused one leaves them asleep (waking hundreds of
  // thousands of CEs at every pause would cost more than the cycles between pauses), so
  // whoever reads or changes endpoints during a pause calls this first (sim::Wafer does).
  void wake_sleepers();

  // Record the wall time of every row phase from now on (row_work.hpp); results do not
  // depend on it. take_row_work returns what was recorded, in (cycle, row, phase) order,
  // and forgets it.
  void set_record_row_work(bool on) { record_row_work_ = on; }
  bool record_row_work() const { return record_row_work_; }
  std::vector<RowWork> take_row_work();

 private:
  // One cache line or more each: rows in different threads write their counters and lists
  // without sharing lines.
  struct alignas(64) RowState {
    std::vector<uint64_t> active;       // bit per column: routers with work
    std::vector<uint64_t> next_active;
    uint32_t active_count = 0;          // bits set in `active`
    uint64_t processed = 0;             // routers processed in phase B this cycle
    bool sent = false;                  // phase A put a wavelet on a link this cycle
    bool failed_in_a = false;           // counters.error came from phase A
    uint64_t mark = fabric::kNever;     // row de-duplication stamp
    // The cycles of its last two sends on links (the latest first) and of its last
    // phase B; chunked cycles (sim/row_chunks.cpp): the cycle it has phase A in, and the
    // chunks still to finish before its phase B may run (a chunk's edge rows).
    uint64_t sent_at = fabric::kNever, sent_before = fabric::kNever;
    uint64_t b_at = fabric::kNever;
    uint64_t a_at = fabric::kNever;
    std::atomic<int> edge_wait{0};
    fabric::CycleCounters counters;
    std::vector<RowWork> work;  // with record_row_work_: this row's phases, in order
  };
  // Chunked cycles: rows [lo, hi), run by one thread in the interleaved order.
  struct Chunk {
    int lo = 0, hi = 0;
  };

  void rebuild_active();
  // Puts router `id` in the active set (its endpoint woke).
  void activate(uint32_t id);
  void close_run();  // writes the fabric's state back; the run is over
  void row_phase_a(int row, uint64_t t);
  void row_phase_b(int row, uint64_t t);
  // The phases themselves, inlined into row_phase_a/b (timed there or not).
  [[gnu::always_inline]] inline void step_row_a(RowState& rs, int row, uint64_t t);
  [[gnu::always_inline]] inline void step_row_b(RowState& rs, int row, uint64_t t);
  void collect_source_rows(int row, int* out, int& n) const;
  // This cycle's phase A and B on every row that needs them (see simulator.cpp).
  void run_rows_in_sweeps(uint64_t t, bool slow_links);
  void run_rows_interleaved(uint64_t t, bool slow_links);
  // Several threads, no loop links: both phases in one job of chunks (row_chunks.cpp).
  void run_rows_in_chunks(uint64_t t, bool slow_links, int threads);
  void run_chunk(int i, uint64_t t, bool slow_links);
  void phase_b_if_needed(int row, uint64_t t, bool slow_links);
  // A domain's cycle: phase A on its rows, the exchange, phase B; the combined flags.
  // One thread: the border rows' phase A first, then the inner rows interleaved while
  // the exchange is under way (domain.cpp); several threads: two sweeps.
  DomainFlags run_rows_in_domain(uint64_t t);
  void run_domain_interleaved(uint64_t t);
  void run_domain_in_sweeps(uint64_t t);
  // Steps of the one-thread order, to agree on the first error (domain.cpp).
  uint64_t step_a(int r) const;
  uint64_t step_b(int q) const;
  bool slow_links() const {  // 2-cycle diagonal links: wavelets arrive a cycle later
    return fabric_.topology().has_diagonals() && fabric_.topology().diag_hop_cycles == 2;
  }
  bool owns(int row) const {  // (false outside the wafer)
    if (row < 0 || row >= fabric_.rows()) return false;
    return owned_.empty() || owned_[static_cast<size_t>(row)];
  }
  // An owned row next to another domain's row: what it sends crosses a cut.
  bool border(int row) const { return !border_.empty() && border_[static_cast<size_t>(row)]; }
  void rethrow_chunked_error();
  // True when this cycle's phases run in one thread (cycle_parallel_, decided by
  // choose_threads at the cycle's start).
  bool serial() const { return !cycle_parallel_; }
  // Whether the cycle about to run may run in several threads (enough work), and so
  // whether it is measured for thread_choice_.
  bool may_share() const;
  void rethrow_first_error(const std::vector<int>& rows);
  template <class F>
  void for_rows(const std::vector<int>& rows, F&& f);

  fabric::Fabric& fabric_;
  std::vector<RowState> rows_;
  std::vector<int> rows_a_;   // rows with an active router, ascending
  std::vector<int> rows_b_;
  std::vector<Chunk> chunks_;  // this cycle's, in chunked cycles
  std::vector<int> chunk_starts_;  // index in rows_a_ of each chunk's first active row
  size_t active_routers_ = 0;  // routers in this cycle's phase-A lists
  Sleepers sleepers_;  // ramp endpoints asleep (their routers may be out of the lists)
  // Rows that sent on a link this cycle and last cycle, and whether a wavelet is on a
  // 2-cycle link: kept across runs, so a wavelet in flight when a run ends arrives in the
  // next run.
  std::vector<int> sender_rows_now_, sender_rows_prev_;
  bool in_flight_ = false;
  uint64_t cycle_ = 0;
  int64_t queued_ = 0;
  int threads_ = 0;
  uint64_t watchdog_ = 10000;
  size_t parallel_min_routers_ = 512;
  bool threads_forced_ = false;  // the user set parallel_min_routers: no measuring
  ThreadChoice thread_choice_;
  bool cycle_parallel_ = false;  // this cycle runs in several threads
  uint64_t parallel_phases_ = 0;  // this run's phases in several threads
  bool broken_ = false;
  bool record_row_work_ = false;
  int chunks_per_thread_ = 4;
  // The run in progress (between start_run and finish_run).
  bool run_open_ = false;
  uint64_t run_max_cycles_ = 0;
  uint64_t idle_for_ = 0;  // cycles without progress (the watchdog's count)
  RunResult run_;
  std::vector<std::pair<int, int>> domain_blocks_;  // rows stepped here (empty: all)
  std::vector<uint8_t> owned_, border_;  // per row (empty: the whole wafer, no cuts)
  std::vector<int> border_rows_;  // the rows marked in border_, ascending
  CutExchange* exchange_ = nullptr;
  int domain_index_ = 0;
  uint64_t domain_work_ = 0;  // work left over all domains after the last exchange
  RowTeam team_;  // last member: its threads stop before the rest goes
};

// Runs f(row) for each of `rows`, in this thread or shared by the team (one phase).
template <class F>
void Simulator::for_rows(const std::vector<int>& rows, F&& f) {
  const int n = static_cast<int>(rows.size());
  const int nt = thread_count();
  if (n <= 1 || serial()) {
    for (int r : rows) f(r);
    return;
  }
  ++parallel_phases_;
  auto each = [&](int i) { f(rows[static_cast<size_t>(i)]); };
  team_.run(nt, n, each);
}

}  // namespace wafersim::sim
