#include "wafersim/sim/simulator.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <string>
#include <tuple>

#include "wafersim/errors.hpp"
#include "wafersim/sim/watchdog.hpp"

namespace wafersim::sim {

using fabric::Fabric;

Simulator::Simulator(Fabric& fabric)
    : fabric_(fabric), rows_(static_cast<size_t>(fabric.rows())) {}

void Simulator::set_threads(int threads) {
  // A bound far above any machine here, so a typo does not ask OpenMP for 10^6 threads.
  constexpr int kMaxThreads = 1024;
  if (threads < 0 || threads > kMaxThreads) {
    throw ConfigError("threads must be in 0.." + std::to_string(kMaxThreads) +
                      " (0: OpenMP default), got " + std::to_string(threads));
  }
  threads_ = threads;
}

void Simulator::set_chunks_per_thread(int n) {
  if (n < 1 || n > 64) {
    throw ConfigError("chunks_per_thread must be 1..64, got " + std::to_string(n));
  }
  chunks_per_thread_ = n;
}

void Simulator::set_spin_wait(std::chrono::microseconds spin) {
  if (spin.count() < 0 || spin.count() > 1000000) {
    throw ConfigError("spin_wait must be 0..1000000 microseconds, got " +
                      std::to_string(spin.count()));
  }
  team_.set_spin(spin);
}

void Simulator::set_endpoint_sleep(bool on) {
  if (run_open_) throw WaferError("endpoint_sleep cannot change during a run");
  fabric_.set_endpoint_sleep(on);
}

void Simulator::set_watchdog(uint64_t cycles) {
  if (cycles == 0) throw ConfigError("watchdog must be at least 1 cycle, got 0");
  watchdog_ = cycles;
}

// Below parallel_min_routers_ active routers (default 512) a cycle runs in one thread:
// handing it out costs more than the work (and far more on an oversubscribed machine).
// Above, thread_choice_ measures which is faster, unless the user set the threshold.
// Work goes to threads in contiguous blocks (static schedule, row_team.hpp): a thread then
// works on the same rows cycle after cycle, so their state stays in its core's cache, and
// only the rows at a block's edges share cache lines with another thread; a thread done
// with its block takes work from the end of another's. OpenMP gives the default thread
// count (OMP_NUM_THREADS); the team runs the cycles.
int Simulator::thread_count() const { return threads_ > 0 ? threads_ : omp_get_max_threads(); }

bool Simulator::may_share() const {
  return thread_count() > 1 && active_routers_ >= parallel_min_routers_ && rows_a_.size() > 1;
}

void Simulator::rebuild_active() {
  rows_a_.clear();
  queued_ = 0;
  active_routers_ = 0;
  const int cols = fabric_.cols();
  const size_t words = fabric_.row_words();
  for (int r = 0; r < fabric_.rows(); ++r) {
    RowState& rs = rows_[static_cast<size_t>(r)];
    rs.active.assign(words, 0);
    rs.next_active.assign(words, 0);
    rs.active_count = 0;
    if (!owns(r)) continue;  // another domain's row: it steps it
    const uint32_t base = static_cast<uint32_t>(r) * static_cast<uint32_t>(cols);
    for (int c = 0; c < cols; ++c) {
      const uint32_t id = base + static_cast<uint32_t>(c);
      queued_ += fabric_.router(id).queued;
      if (fabric_.has_work(id)) {
        rs.active[static_cast<size_t>(c / 64)] |= uint64_t{1} << (c % 64);
        ++rs.active_count;
      }
    }
    if (rs.active_count) rows_a_.push_back(r);
    active_routers_ += rs.active_count;
  }
}

void Simulator::activate(uint32_t id) {
  const int cols = fabric_.cols();
  const int r = static_cast<int>(id / static_cast<uint32_t>(cols));
  const int c = static_cast<int>(id % static_cast<uint32_t>(cols));
  RowState& rs = rows_[static_cast<size_t>(r)];
  uint64_t& word = rs.active[static_cast<size_t>(c / 64)];
  const uint64_t b = uint64_t{1} << (c % 64);
  if (word & b) return;  // it had work of its own
  word |= b;
  ++active_routers_;
  if (rs.active_count++ == 0) rows_a_.insert(std::lower_bound(rows_a_.begin(), rows_a_.end(), r), r);
}

void Simulator::wake_sleepers() {
  sleepers_.wake_all(fabric_, cycle_, [&](uint32_t id) { activate(id); });
}

// Rows whose routers can send to `row`: itself (E/W, skip), the rows above and below
// (N/S, diagonals) and, with loop links, the other end of each column.
void Simulator::collect_source_rows(int row, int* out, int& n) const {
  const int rows = fabric_.rows();
  n = 0;
  auto add = [&](int r) {
    if (r < 0 || r >= rows) return;
    for (int i = 0; i < n; ++i) {
      if (out[i] == r) return;
    }
    out[n++] = r;
  };
  add(row);
  add(row - 1);
  add(row + 1);
  if (fabric_.topology().loop) {
    if (row == 0) add(rows - 1);
    if (row == rows - 1) add(0);
  }
}

namespace {
uint64_t elapsed_ns(Simulator::Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Simulator::Clock::now() - start)
          .count());
}
}  // namespace

inline void Simulator::step_row_a(RowState& rs, int row, uint64_t t) {
  rs.sent = false;
  try {
    rs.sent = fabric_.phase_a_row(row, rs.active.data(), t, rs.counters).links;
  } catch (...) {
    if (!rs.counters.error) rs.failed_in_a = true;
    rs.counters.fail(std::current_exception());
  }
  if (rs.sent) {
    rs.sent_before = rs.sent_at;
    rs.sent_at = t;
  }
}

// The routers of this row that are active or receive a wavelet this cycle, in column order;
// those with work stay active.
inline void Simulator::step_row_b(RowState& rs, int row, uint64_t t) {
  rs.b_at = t;
  try {
    uint32_t count = 0;
    rs.processed = fabric_.phase_b_row(row, rs.active.data(), rs.next_active.data(), t,
                                       rs.counters, count);
    rs.active.swap(rs.next_active);
    rs.active_count = count;
  } catch (...) {
    if (!rs.counters.error) rs.failed_in_a = false;
    rs.counters.fail(std::current_exception());
  }
}

// With record_row_work_ each phase is timed in the thread that runs it and noted in its
// row's own list (rows in different threads share no list).
void Simulator::row_phase_a(int row, uint64_t t) {
  RowState& rs = rows_[static_cast<size_t>(row)];
  if (!record_row_work_) [[likely]] {
    step_row_a(rs, row, t);
    return;
  }
  const uint32_t routers = rs.active_count;
  const Clock::time_point start = Clock::now();
  step_row_a(rs, row, t);
  rs.work.push_back({t, elapsed_ns(start), static_cast<uint32_t>(row), routers, 0});
}

void Simulator::row_phase_b(int row, uint64_t t) {
  RowState& rs = rows_[static_cast<size_t>(row)];
  if (!record_row_work_) [[likely]] {
    step_row_b(rs, row, t);
    return;
  }
  const Clock::time_point start = Clock::now();
  step_row_b(rs, row, t);
  rs.work.push_back(
      {t, elapsed_ns(start), static_cast<uint32_t>(row), static_cast<uint32_t>(rs.processed), 1});
}

std::vector<RowWork> Simulator::take_row_work() {
  std::vector<RowWork> all;
  size_t n = 0;
  for (const RowState& rs : rows_) n += rs.work.size();
  all.reserve(n);
  for (RowState& rs : rows_) {
    all.insert(all.end(), rs.work.begin(), rs.work.end());
    std::vector<RowWork>().swap(rs.work);
  }
  std::sort(all.begin(), all.end(), [](const RowWork& a, const RowWork& b) {
    return std::tie(a.cycle, a.row, a.phase) < std::tie(b.cycle, b.row, b.phase);
  });
  return all;
}

void Simulator::rethrow_first_error(const std::vector<int>& rows) {
  for (int r : rows) {
    auto& err = rows_[static_cast<size_t>(r)].counters.error;
    if (err) {
      std::exception_ptr e = err;
      for (RowState& rs : rows_) rs.counters.error = nullptr;
      broken_ = true;
      std::rethrow_exception(e);
    }
  }
}

// Phase A over every active row, then phase B over the rows that are active or receive:
// the order the cycle contract is written in, and the one the threads share out.
void Simulator::run_rows_in_sweeps(uint64_t t, bool slow_links) {
  for_rows(rows_a_, [&](int r) { row_phase_a(r, t); });
  rethrow_first_error(rows_a_);

  // Phase B runs on active rows and on the rows their wavelets go to.
  std::swap(sender_rows_prev_, sender_rows_now_);
  sender_rows_now_.clear();
  rows_b_.clear();
  auto add_row = [&](int r) {
    if (r < 0 || r >= fabric_.rows()) return;
    RowState& rs = rows_[static_cast<size_t>(r)];
    if (rs.mark != t) {
      rs.mark = t;
      rows_b_.push_back(r);
    }
  };
  auto add_targets_of = [&](int r) {
    int sources[5];
    int n = 0;
    collect_source_rows(r, sources, n);  // the relation is symmetric
    for (int i = 0; i < n; ++i) add_row(sources[i]);
  };
  for (int r : rows_a_) {
    add_row(r);
    if (rows_[static_cast<size_t>(r)].sent) {
      sender_rows_now_.push_back(r);
      add_targets_of(r);
    }
  }
  if (slow_links) {
    for (int r : sender_rows_prev_) add_targets_of(r);
  }
  std::sort(rows_b_.begin(), rows_b_.end());
  for_rows(rows_b_, [&](int r) { row_phase_b(r, t); });
  rethrow_first_error(rows_b_);
}

// One thread: phase B of a row runs as soon as every row that sends into it has done phase
// A, i.e. right after phase A of the row above: A(0) A(1) B(0) A(2) B(1) ... This is the
// same cycle: B(q) writes only row q and reads what rows q-1..q+1 sent, and A(r) for
// r >= q+2 reads the stall bits of rows r-1..r+1 and sends to rows r-1..r+1, so neither sees
// the other. What it gains: a row's routers, queues and endpoints are still in cache
// when its phase B comes, where a whole-fabric sweep between the phases would have
// evicted them (a 64 x 64 fabric's state is larger than a core's L2 cache).
void Simulator::run_rows_interleaved(uint64_t t, bool slow_links) {
  std::swap(sender_rows_prev_, sender_rows_now_);
  sender_rows_now_.clear();
  rows_b_.clear();
  const int rows = fabric_.rows();
  // Rows that get phase B this cycle are stamped with `mark = t`.
  auto need_b = [&](int r) {
    if (r >= 0 && r < rows) rows_[static_cast<size_t>(r)].mark = t;
  };
  if (slow_links) {  // wavelets sent last cycle on 2-cycle links arrive now
    for (int r : sender_rows_prev_) {
      for (int q = r - 1; q <= r + 1; ++q) need_b(q);
    }
  }
  int next_b = 0;  // rows below this one have had their phase B (or need none)
  auto phase_b_below = [&](int limit) {
    for (; next_b < limit; ++next_b) {
      RowState& rs = rows_[static_cast<size_t>(next_b)];
      if (rs.mark != t) continue;
      rows_b_.push_back(next_b);
      row_phase_b(next_b, t);
      if (rs.counters.error) rethrow_first_error(rows_b_);
    }
  };
  for (int r : rows_a_) {
    phase_b_below(r - 1);  // rows below r - 1 have every sender done
    row_phase_a(r, t);
    RowState& rs = rows_[static_cast<size_t>(r)];
    if (rs.counters.error) rethrow_first_error(rows_a_);
    need_b(r);
    if (rs.sent) {
      sender_rows_now_.push_back(r);
      need_b(r - 1);
      need_b(r + 1);
    }
    phase_b_below(r);  // row r - 1's senders (r - 2, r - 1, r) are done
  }
  phase_b_below(rows);
}

RunResult Simulator::run(uint64_t max_cycles) {
  start_run(max_cycles);
  advance(Clock::time_point::max());
  return finish_run();
}

void Simulator::check_can_run() const {
  if (broken_) {
    throw WaferError("this wafer stopped mid-cycle after an error; build a new one to run again");
  }
  if (run_open_) {
    throw WaferError("this wafer is already running (run() called again during a run, e.g. "
                     "from a signal handler)");
  }
}

void Simulator::start_run(uint64_t max_cycles) {
  check_can_run();
  run_ = RunResult{};
  run_.start_cycle = cycle_;
  run_max_cycles_ = max_cycles;
  idle_for_ = 0;
  parallel_phases_ = 0;
  sleepers_.take_slept_cycles();  // (what a failed run left)
  for (RowState& rs : rows_) {
    rs.counters = fabric::CycleCounters{};
  }
  fabric_.latch_endpoint_stalls();
  // The bit-plane pass of packet mode writes into the receiving row's queues in the
  // sender's phase A, which no cut carries; its general pass gives the same results.
  if (exchange_) fabric_.set_packet_bit_planes(false);
  rebuild_active();
  // The fabric may keep its state in a form of its own while the cycles run (also while a
  // run pauses); close_run writes it back.
  fabric_.begin_run();
  run_open_ = true;
  if (exchange_) {  // the neighbours' stall rows, and whether any domain has work
    DomainFlags local;
    local.work = active_routers_ + sleepers_.count() + (in_flight_ ? 1 : 0);
    local.queued = queued_;
    domain_work_ = exchange_->after_phase_b(cycle_, local).work;
  }
}

void Simulator::close_run() {
  // After an error: what the failed cycle's rows reported is not in the book yet. (A run
  // that ends well has woken them all already.)
  for (RowState& rs : rows_) {
    sleepers_.note(fabric_, rs.counters);
    rs.counters.start_cycle();
  }
  wake_sleepers();
  fabric_.end_run();
  // The packet-mode cycle loop reads its host ports' stall bits directly: latch them for
  // whoever looks at the routers between runs.
  fabric_.latch_endpoint_stalls();
  run_open_ = false;
}

// A pause keeps the active set, the watchdog's count and this run's counters, so the cycles
// after it are the ones an uninterrupted run would have simulated.
bool Simulator::advance(Clock::time_point pause_at) {
  if (!run_open_) internal_error("Simulator::advance without start_run");
  RunResult& result = run_;
  struct CloseOnError {  // an error ends the run
    Simulator& s;
    int pending = std::uncaught_exceptions();
    ~CloseOnError() {
      if (std::uncaught_exceptions() > pending && s.run_open_) s.close_run();
    }
  } close_on_error{*this};
  const bool slow_links = fabric_.topology().has_diagonals() &&
                          fabric_.topology().diag_hop_cycles == 2;
  bool& in_flight = in_flight_;  // wavelets on 2-cycle links, arriving next cycle
  // Reading the clock costs about as much as a small fabric's cycle: look at it after
  // enough work (every 256 cycles on a small fabric, every cycle on a large one).
  constexpr uint64_t kClockWork = 16384, kCycleWork = 64;
  uint64_t work = 0;
  while (result.cycles < run_max_cycles_) {
    const uint64_t t = cycle_;
    sleepers_.wake_due(fabric_, t, [&](uint32_t id) { activate(id); });
    if (exchange_ ? domain_work_ == 0
                  : rows_a_.empty() && !in_flight && sleepers_.count() == 0) {
      result.quiescent = true;
      break;
    }
    // Sleeping endpoints this cycle: their routers count as processed (router_cycles
    // means what it did before endpoints slept), and a timed sleeper works in it.
    const uint64_t asleep = sleepers_.count();
    bool sleepers_work = sleepers_.timed() > 0;
    // One thread or several: by the floor, then by measurement unless the user forced it.
    const bool measured = may_share() && !threads_forced_;
    cycle_parallel_ = may_share() && (threads_forced_ || thread_choice_.parallel());
    const Clock::time_point cycle_start = measured ? Clock::now() : Clock::time_point{};
    const uint64_t work_a = active_routers_;
    // Without loop links (row 0 would need the last row's phase A) the rows' phases
    // interleave: in one thread (run_rows_interleaved), or in chunks of rows shared by
    // the threads (run_rows_in_chunks); with loop links, two sweeps.
    DomainFlags domain;
    if (exchange_) {
      domain = run_rows_in_domain(t);
    } else if (fabric_.topology().loop) {
      run_rows_in_sweeps(t, slow_links);
    } else if (serial()) {
      run_rows_interleaved(t, slow_links);
    } else {
      run_rows_in_chunks(t, slow_links, thread_count());
    }

    // Merge this cycle's counters (in row order) and find next cycle's active rows.
    uint64_t moves = 0, progress = 0, slow = 0, processed = 0, asleep_processed = 0;
    rows_a_.clear();
    active_routers_ = 0;
    for (int r : rows_b_) {
      RowState& rs = rows_[static_cast<size_t>(r)];
      moves += rs.counters.moves;
      progress += rs.counters.progress;
      slow += rs.counters.slow_links_used;
      queued_ += rs.counters.queued_delta;
      processed += rs.processed;
      asleep_processed += rs.counters.asleep_processed;
      sleepers_.note(fabric_, rs.counters);
      rs.counters.start_cycle();
      if (rs.active_count) rows_a_.push_back(r);
      active_routers_ += rs.active_count;
    }
    result.router_cycles += processed + asleep - asleep_processed;
    if (measured) {
      thread_choice_.record(cycle_parallel_, work_a + processed,
                            std::chrono::duration_cast<std::chrono::nanoseconds>(
                                Clock::now() - cycle_start));
    }
    in_flight = slow > 0;
    result.moves += moves;
    ++result.cycles;
    ++cycle_;
    int64_t queued_all = queued_;
    if (exchange_) {  // what every domain decides from the whole wafer
      domain.work = active_routers_ + sleepers_.count() + (in_flight ? 1 : 0);
      domain.progress = moves + progress + (sleepers_work ? 1 : 0);
      domain.queued = queued_;
      domain = exchange_->after_phase_b(t, domain);
      if (domain.error_step != fabric::kNever) {
        broken_ = true;
        if (domain.error_domain != domain_index_) {
          throw WaferError("the run stopped: domain " + std::to_string(domain.error_domain) +
                           " failed at cycle " + std::to_string(t));
        }
        rethrow_first_error(rows_b_);
      }
      domain_work_ = domain.work;
      progress = domain.progress;
      moves = 0;
      sleepers_work = false;
      queued_all = domain.queued;
    }
    if (moves + progress > 0 || sleepers_work) {
      idle_for_ = 0;
    } else if (++idle_for_ >= watchdog_) {
      close_run();  // the report reads the routers
      // A domain sees only its rows: its report is the whole wafer's, merged from every
      // domain's part after they all raise (wafersim.domains, watchdog.hpp).
      throw DeadlockError("deadlock: nothing moved for " + std::to_string(idle_for_) +
                              " cycles (watchdog) at cycle " + std::to_string(cycle_) +
                              " with " + std::to_string(queued_all) +
                              " wavelet(s) queued in routers [0306]",
                          exchange_ ? std::string() : deadlock_report(fabric_, cycle_));
    }
    work += kCycleWork + processed;
    if (work >= kClockWork) {
      work = 0;
      if (Clock::now() >= pause_at) return false;  // (sleepers sleep on: see wake_sleepers)
    }
  }
  wake_sleepers();
  if (!result.quiescent && (exchange_ ? domain_work_ == 0 : rows_a_.empty() && !in_flight)) {
    result.quiescent = true;
  }
  return true;
}

RunResult Simulator::finish_run() {
  if (!run_open_) internal_error("Simulator::finish_run without start_run");
  close_run();
  RunResult result = std::move(run_);
  run_ = RunResult{};
  result.parallel_phases = parallel_phases_;
  result.slept_cycles = sleepers_.take_slept_cycles();
  for (RowState& rs : rows_) {
    const auto& c = rs.counters;
    result.injected += c.injected;
    result.delivered += c.delivered;
    result.slept_cycles += c.slept_cycles;
    auto merge = [](std::vector<uint64_t>& into, const std::vector<uint64_t>& from) {
      if (from.size() > into.size()) into.resize(from.size(), 0);
      for (size_t i = 0; i < from.size(); ++i) into[i] += from[i];
    };
    result.latency.merge(c.latency);
    merge(result.hop_hist, c.hop_hist);
  }
  return result;
}

}  // namespace wafersim::sim
