// The cycle of one domain of a wafer split over several processes (domain.hpp).
#include <algorithm>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/sim/simulator.hpp"

namespace wafersim::sim {

void Simulator::set_domain(int lo, int hi, int index, CutExchange* exchange) {
  if (run_open_) throw WaferError("the domain of a wafer cannot change during a run");
  const int rows = fabric_.rows();
  if (exchange == nullptr) {
    domain_lo_ = 0;
    domain_hi_ = rows;
    domain_index_ = 0;
    exchange_ = nullptr;
    return;
  }
  if (lo < 0 || hi > rows || lo >= hi) {
    throw ConfigError("a domain is rows [lo, hi) with 0 <= lo < hi <= " + std::to_string(rows) +
                      ", got [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  }
  if (lo > 0) fabric_.check_cut(lo - 1, lo);  // refuses what cuts cannot carry
  if (hi < rows) fabric_.check_cut(hi, hi - 1);
  domain_lo_ = lo;
  domain_hi_ = hi;
  domain_index_ = index;
  exchange_ = exchange;
}

// Phase A of every active row, the exchange, then phase B of the rows that are active,
// receive from a row of the domain, or border another domain (whose wavelets may cross the
// cut: a row with nothing to do costs nothing in phase B). Errors are not thrown here: the
// domains first agree which one met the first failing step of the one-thread order, so
// every process raises the same error (advance).
DomainFlags Simulator::run_rows_in_domain(uint64_t t) {
  std::swap(sender_rows_prev_, sender_rows_now_);
  sender_rows_now_.clear();
  for_rows(rows_a_, [&](int r) { row_phase_a(r, t); });
  bool failed = false;
  for (int r : rows_a_) failed = failed || rows_[static_cast<size_t>(r)].counters.error;
  exchange_->after_phase_a(t);

  rows_b_.clear();
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
  add_row(domain_lo_);
  add_row(domain_hi_ - 1);
  std::sort(rows_b_.begin(), rows_b_.end());
  if (!failed) for_rows(rows_b_, [&](int r) { row_phase_b(r, t); });

  DomainFlags flags;
  for (int r : rows_b_) {
    const RowState& rs = rows_[static_cast<size_t>(r)];
    if (!rs.counters.error) continue;
    const uint64_t step = 2 * static_cast<uint64_t>(r) + (rs.failed_in_a ? 0 : 3);
    if (step < flags.error_step) {
      flags.error_step = step;
      flags.error_domain = domain_index_;
    }
  }
  return flags;
}

}  // namespace wafersim::sim
