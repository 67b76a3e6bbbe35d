// Chunked cycles: a cycle's two phases in one job for the threads, each thread running
// contiguous rows in the interleaved order of one thread (docs/fabric.md, "Threads").
//
// Two sweeps (all rows' phase A, then all rows' phase B) cost two hand-outs and two
// waits per cycle, and by the time a thread comes back to a row for phase B its routers
// and compute elements have left its cache. Here the rows are split into chunks of
// consecutive rows, a few per thread. A thread runs its chunk as one thread runs the
// whole fabric: A(lo) A(lo+1) B(lo) A(lo+2) B(lo+1) ..., phase B of a row right after the
// phase A of the row below it. The cycle contract allows it: B(q) reads what rows q-1, q,
// q+1 sent in phase A and writes row q's state, which A(q-1), A(q), A(q+1) read (their
// stall bits come from the end of the previous cycle), so B(q) must follow exactly those
// three phases A, and nothing else orders them. Only a chunk's first and last rows have
// a neighbour in another chunk: their phase B waits until every chunk holding one of the
// three rows has finished, and the thread that finishes the last of them runs it (a
// counter per edge row). So a cycle is one job and one wait, whatever the thread count,
// and what any row computes is what the interleaved order in one thread computes.
//
// python/wafersim/row_work.py (chunk_model) replays this schedule on recorded row times:
// a change to the cut, the hand-out or the edge rows here belongs there too.
//
// Errors: every phase runs even after one failed, and the error raised is the one the
// interleaved order in one thread meets first (it stops there): A(r) comes at step 2r,
// B(q) at step 2q + 3, right after A(q + 1). A phase computes the same whatever ran after
// it, so the error does not depend on the thread count or the chunks.
#include <algorithm>
#include <array>
#include <cstdint>

#include "wafersim/sim/simulator.hpp"

namespace wafersim::sim {

void Simulator::run_rows_in_chunks(uint64_t t, bool slow_links, int threads) {
  const int rows = fabric_.rows();
  const int n = static_cast<int>(rows_a_.size());
  const int c = std::min(n, chunks_per_thread_ * threads);
  uint64_t routers = 0;
  for (int r : rows_a_) {
    rows_[static_cast<size_t>(r)].a_at = t;
    routers += rows_[static_cast<size_t>(r)].active_count;
  }
  // Chunk i holds the i-th group of active rows and the rows up to the next group
  // (rows without phase A that may need phase B); the first starts at row 0. The groups
  // hold about equal numbers of active routers, not of rows: on a wavefront (program 3
  // over the whole wafer) one active row may hold a hundred times the work of another,
  // and a chunk of heavy rows would hold up the cycle. Group i starts at the first active
  // row before which i/c of the active routers lie, at least one row after group i - 1
  // and leaving one row for each group after it.
  chunk_starts_.assign(static_cast<size_t>(c), 0);
  uint64_t before = 0;
  for (int j = 1, i = 1; j < n && i < c; ++j) {
    before += rows_[static_cast<size_t>(rows_a_[static_cast<size_t>(j - 1)])].active_count;
    if (before * static_cast<uint64_t>(c) >= routers * static_cast<uint64_t>(i) ||
        n - j == c - i) {
      chunk_starts_[static_cast<size_t>(i++)] = j;
    }
  }
  chunks_.resize(static_cast<size_t>(c));
  for (int i = 0; i < c; ++i) {
    Chunk& ch = chunks_[static_cast<size_t>(i)];
    ch.lo = i == 0 ? 0 : rows_a_[static_cast<size_t>(chunk_starts_[static_cast<size_t>(i)])];
    ch.hi = i + 1 == c ? rows
                       : rows_a_[static_cast<size_t>(chunk_starts_[static_cast<size_t>(i + 1)])];
  }
  // An edge row waits for its own chunk and each neighbouring chunk with a row next to it.
  for (int i = 0; i < c; ++i) {
    const Chunk& ch = chunks_[static_cast<size_t>(i)];
    const bool first_edge = i > 0, last_edge = i + 1 < c;
    if (ch.lo == ch.hi - 1) {
      if (first_edge || last_edge) {
        rows_[static_cast<size_t>(ch.lo)].edge_wait.store(1 + first_edge + last_edge,
                                                          std::memory_order_relaxed);
      }
      continue;
    }
    if (first_edge) rows_[static_cast<size_t>(ch.lo)].edge_wait.store(2, std::memory_order_relaxed);
    if (last_edge) rows_[static_cast<size_t>(ch.hi - 1)].edge_wait.store(2, std::memory_order_relaxed);
  }
  parallel_phases_ += 2;
  auto each = [&](int i) { run_chunk(i, t, slow_links); };
  team_.run(threads, c, each);

  // The rows that had phase B and those that sent, in row order, as the other paths
  // leave them for the cycle's end.
  std::swap(sender_rows_prev_, sender_rows_now_);
  sender_rows_now_.clear();
  rows_b_.clear();
  for (int r = 0; r < rows; ++r) {
    const RowState& rs = rows_[static_cast<size_t>(r)];
    if (rs.b_at == t) rows_b_.push_back(r);
    if (rs.a_at == t && rs.sent_at == t) sender_rows_now_.push_back(r);
  }
  rethrow_chunked_error();
}

void Simulator::run_chunk(int i, uint64_t t, bool slow_links) {
  const int c = static_cast<int>(chunks_.size());
  const Chunk ch = chunks_[static_cast<size_t>(i)];
  const bool first_edge = i > 0, last_edge = i + 1 < c;
  auto interior = [&](int q) {
    return !((q == ch.lo && first_edge) || (q == ch.hi - 1 && last_edge));
  };
  for (int r = ch.lo; r < ch.hi; ++r) {
    if (rows_[static_cast<size_t>(r)].a_at == t) row_phase_a(r, t);
    if (r - 1 >= ch.lo && interior(r - 1)) phase_b_if_needed(r - 1, t, slow_links);
  }
  if (interior(ch.hi - 1)) phase_b_if_needed(ch.hi - 1, t, slow_links);  // the fabric's last row

  // This chunk is done: the edge rows next to it may be ready (the last arrival runs them).
  std::array<int, 4> edges{};
  int k = 0;
  if (first_edge) {
    edges[k++] = ch.lo;
    edges[k++] = ch.lo - 1;  // the previous chunk's last row
  }
  if (last_edge) {
    if (!(first_edge && ch.hi - 1 == ch.lo)) edges[k++] = ch.hi - 1;
    edges[k++] = ch.hi;  // the next chunk's first row
  }
  for (int e = 0; e < k; ++e) {
    RowState& rs = rows_[static_cast<size_t>(edges[static_cast<size_t>(e)])];
    if (rs.edge_wait.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      phase_b_if_needed(edges[static_cast<size_t>(e)], t, slow_links);
    }
  }
}

// Phase B runs on a row with phase A this cycle and on a row that a wavelet may reach:
// one next to a row that sent this cycle or, over 2-cycle links, the cycle before.
void Simulator::phase_b_if_needed(int row, uint64_t t, bool slow_links) {
  bool need = rows_[static_cast<size_t>(row)].a_at == t;
  for (int r = std::max(0, row - 1); !need && r <= std::min(fabric_.rows() - 1, row + 1); ++r) {
    const RowState& s = rows_[static_cast<size_t>(r)];
    need = s.sent_at == t ||
           (slow_links && t > 0 && (s.sent_at == t - 1 || s.sent_before == t - 1));
  }
  if (need) row_phase_b(row, t);
}

void Simulator::rethrow_chunked_error() {
  int pick = -1;
  int64_t first_step = INT64_MAX;
  for (int r = 0; r < fabric_.rows(); ++r) {
    const RowState& rs = rows_[static_cast<size_t>(r)];
    if (!rs.counters.error) continue;
    const int64_t step = rs.failed_in_a ? 2 * int64_t{r} : 2 * int64_t{r} + 3;
    if (step < first_step) {
      first_step = step;
      pick = r;
    }
  }
  if (pick >= 0) rethrow_first_error({pick});
}

}  // namespace wafersim::sim
