// The cycle of one domain of a wafer split over several processes (domain.hpp).
#include <algorithm>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/sim/simulator.hpp"

namespace wafersim::sim {

void Simulator::set_domain(const std::vector<std::pair<int, int>>& blocks, int index,
                           CutExchange* exchange) {
  if (run_open_) throw WaferError("the domain of a wafer cannot change during a run");
  const int rows = fabric_.rows();
  if (exchange == nullptr) {
    domain_blocks_.clear();
    owned_.clear();
    border_.clear();
    border_rows_.clear();
    domain_index_ = 0;
    exchange_ = nullptr;
    return;
  }
  if (blocks.empty()) throw ConfigError("a domain needs at least one block of rows");
  int prev = -1;
  for (auto [lo, hi] : blocks) {
    if (lo <= prev || lo < 0 || hi > rows || lo >= hi) {
      throw ConfigError("a domain is ascending, disjoint blocks of rows [lo, hi) with 0 <= lo "
                        "< hi <= " + std::to_string(rows) + ", got [" + std::to_string(lo) +
                        ", " + std::to_string(hi) + ") after row " + std::to_string(prev));
    }
    if (lo > 0) fabric_.check_cut(lo - 1, lo);  // refuses what cuts cannot carry
    if (hi < rows) fabric_.check_cut(hi, hi - 1);
    prev = hi - 1;
  }
  std::vector<uint8_t> owned(static_cast<size_t>(rows), 0);
  for (auto [lo, hi] : blocks) {
    for (int r = lo; r < hi; ++r) owned[static_cast<size_t>(r)] = 1;
  }
  // With loop links the last row and row 0 are neighbours (the N/S wrap).
  const bool loop = fabric_.topology().loop;
  if (loop && !owned[0] != !owned[static_cast<size_t>(rows - 1)]) fabric_.check_cut(rows - 1, 0);
  std::vector<uint8_t> border(static_cast<size_t>(rows), 0);
  border_rows_.clear();
  for (int r = 0; r < rows; ++r) {
    const int above = r > 0 ? r - 1 : loop ? rows - 1 : -1;
    const int below = r + 1 < rows ? r + 1 : loop ? 0 : -1;
    const bool cut_above = above >= 0 && !owned[static_cast<size_t>(above)];
    const bool cut_below = below >= 0 && !owned[static_cast<size_t>(below)];
    if (owned[static_cast<size_t>(r)] && (cut_above || cut_below)) {
      border[static_cast<size_t>(r)] = 1;
      border_rows_.push_back(r);
    }
  }
  domain_blocks_ = blocks;
  owned_ = std::move(owned);
  border_ = std::move(border);
  domain_index_ = index;
  exchange_ = exchange;
}

// A step of the one-thread order (run_rows_interleaved): phase A of row r is step 2r, phase
// B of row q step 2q + 3 (right after phase A of row q + 1). With loop links one process
// runs two sweeps (run_rows_in_sweeps): phase A of every row, then phase B of every row.
uint64_t Simulator::step_a(int r) const {
  return fabric_.topology().loop ? static_cast<uint64_t>(r) : 2 * static_cast<uint64_t>(r);
}
uint64_t Simulator::step_b(int q) const {
  return fabric_.topology().loop ? static_cast<uint64_t>(fabric_.rows()) + static_cast<uint64_t>(q)
                                 : 2 * static_cast<uint64_t>(q) + 3;
}

// Errors are not thrown here: the domains first agree which one met the first failing step
// of the one-thread order, so every process raises the same error (advance).
DomainFlags Simulator::run_rows_in_domain(uint64_t t) {
  std::swap(sender_rows_prev_, sender_rows_now_);
  sender_rows_now_.clear();
  rows_b_.clear();
  if (serial()) {
    run_domain_interleaved(t);
  } else {
    run_domain_in_sweeps(t);
  }
  std::sort(rows_b_.begin(), rows_b_.end());  // the counters merge in row order
  DomainFlags flags;
  for (int r : rows_b_) {
    const RowState& rs = rows_[static_cast<size_t>(r)];
    if (!rs.counters.error) continue;
    const uint64_t step = rs.failed_in_a ? step_a(r) : step_b(r);
    if (step < flags.error_step) {
      flags.error_step = step;
      flags.error_domain = domain_index_;
    }
  }
  return flags;
}

// One thread. The border rows' phase A comes first (an owned row next to another domain's
// row; a domain of several blocks of rows has up to two per block), so that what they send
// across the cuts travels while the inner rows step; the inner rows then run in the
// one-thread order of run_rows_interleaved (phase B of row q right after phase A of row
// q + 1, while the row is still in cache), and the border rows' phase B comes last, after
// the exchange. Each phase still runs after every phase it reads: phase B of row q after
// phase A of rows q - 1..q + 1, phase A of row r before phase B of rows r - 1..r + 1. After
// a failing step only steps that come earlier in the one-thread order run (the first error
// is the one one process raises; later steps could see a half-done row).
void Simulator::run_domain_interleaved(uint64_t t) {
  uint64_t failed_at = fabric::kNever;  // the first failing step so far
  auto need_b = [&](int r) {
    if (owns(r)) rows_[static_cast<size_t>(r)].mark = t;
  };
  auto phase_a = [&](int r) {
    if (step_a(r) > failed_at) return;
    row_phase_a(r, t);
    RowState& rs = rows_[static_cast<size_t>(r)];
    if (rs.counters.error) failed_at = std::min(failed_at, step_a(r));
    need_b(r);
    if (rs.sent) {
      sender_rows_now_.push_back(r);
      need_b(r - 1);
      need_b(r + 1);
    }
  };
  auto phase_b = [&](int q) {
    RowState& rs = rows_[static_cast<size_t>(q)];
    if (rs.mark != t) return;
    rows_b_.push_back(q);
    if (step_b(q) > failed_at) return;
    row_phase_b(q, t);
    if (rs.counters.error) failed_at = std::min(failed_at, step_b(q));
  };
  for (int r : border_rows_) need_b(r);  // the border rows always: a neighbour may have sent
  if (slow_links()) {  // wavelets sent last cycle on 2-cycle links arrive now
    for (int r : sender_rows_prev_) {
      for (int q = r - 1; q <= r + 1; ++q) need_b(q);
    }
  }
  for (int r : rows_a_) {  // (rows_a_ ascends and holds owned rows only)
    if (border(r)) phase_a(r);
  }
  exchange_->send_cuts(t);
  int next_b = 0;  // inner rows below this one have had their phase B (or need none)
  auto phase_b_below = [&](int limit) {
    for (; next_b < limit; ++next_b) {
      if (owns(next_b) && !border(next_b)) phase_b(next_b);
    }
  };
  for (int r : rows_a_) {
    if (border(r)) continue;
    phase_b_below(r - 1);
    phase_a(r);
    phase_b_below(r);
  }
  phase_b_below(fabric_.rows());
  exchange_->receive_cuts(t);
  for (int r : border_rows_) phase_b(r);
}

// Several threads: phase A of every active row shared out, the exchange, then phase B of
// the rows that are active, receive from a row of the domain, or border another domain.
void Simulator::run_domain_in_sweeps(uint64_t t) {
  for_rows(rows_a_, [&](int r) { row_phase_a(r, t); });
  bool failed = false;
  for (int r : rows_a_) failed = failed || rows_[static_cast<size_t>(r)].counters.error;
  exchange_->send_cuts(t);
  exchange_->receive_cuts(t);
  auto add_row = [&](int r) {
    if (!owns(r)) return;
    RowState& rs = rows_[static_cast<size_t>(r)];
    if (rs.mark != t) {
      rs.mark = t;
      rows_b_.push_back(r);
    }
  };
  for (int r : rows_a_) {
    add_row(r);
    if (rows_[static_cast<size_t>(r)].sent) {
      sender_rows_now_.push_back(r);
      add_row(r - 1);
      add_row(r + 1);
    }
  }
  for (int r : border_rows_) add_row(r);
  if (slow_links()) {  // wavelets sent last cycle on 2-cycle links arrive now
    for (int r : sender_rows_prev_) {
      for (int q = r - 1; q <= r + 1; ++q) add_row(q);
    }
  }
  std::sort(rows_b_.begin(), rows_b_.end());
  if (!failed) for_rows(rows_b_, [&](int r) { row_phase_b(r, t); });
}

}  // namespace wafersim::sim
