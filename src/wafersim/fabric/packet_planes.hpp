// Packet mode's state during a run, as bit planes over each row's columns: the form its
// fast pass (fabric_packet_planes_cycle.cpp) schedules a whole row with word operations
// instead of visiting each router's queues in turn.
//
// Only for the default queue, depth 2 with no skid entry (capacity 2, stall threshold 1):
// a queue then holds 0, 1 or 2 wavelets, i.e. two bits, and stalls its source exactly when
// it holds 2 [0333]. Per row and per input direction k (one queue per input port in packet
// mode) a plane holds one bit per column:
//   has_one[k]  the queue holds at least one wavelet;   has_two[k]  it holds two;
//   head[k]     its ring-buffer head position;          stall[k]    has_two at the end of
//               the last phase B, what the neighbours read in phase A [0317], [0333];
//   tail[k]     where the next wavelet enters, as of the end of the last phase B: a
//               sender writes it there directly, in its phase A (see the pass);
//   want[o][k]  its head goes to output o next (the Dest of the head, [0318]);
//   last[o][k]  output o's scheduler picked queue k last (the round-robin pointer, [0320]);
// and per row: live (the host port is not idle), ramp_open (a host port without a sink
// limit: the off-ramp never stalls) and ramp_limited (a host port whose sink may stall).
//
// The planes exist only while a run is going on: Fabric::begin_run builds them from the
// routers' queues and Fabric::end_run writes them back, so everything else (inspection,
// counters, the watchdog's report) reads the queues as in every other mode. Directions
// are numbered compactly (`index`), in Dir order, over those packet routing can use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::fabric {

class PacketPlanes {
 public:
  static constexpr int kMaxDirs = 9;   // E, W, N, S, four diagonals, ramp
  static constexpr int kMaxWords = 4;  // packet mode has at most 256 columns
  static constexpr uint32_t kNoSlot = ~uint32_t{0};

  // `dirs`: the input (and output) directions present, in Dir order.
  void resize(int rows, int cols, DirMask dirs) {
    count_ = 0;
    for (int d = 0; d < kNumDirs; ++d) index_[d] = -1;
    for (DirMask m = dirs; m; m &= m - 1) {
      const Dir d = first_dir(m);
      index_[d] = static_cast<int8_t>(count_);
      dirs_[count_++] = d;
    }
    words_ = static_cast<size_t>((cols + 63) / 64);
    const size_t planes = static_cast<size_t>(5 * count_ + 2 * count_ * count_ + 3);
    stride_ = (planes * words_ + kLineWords - 1) / kLineWords * kLineWords;
    data_.assign(static_cast<size_t>(rows) * stride_ + kLineWords, 0);
    const auto addr = reinterpret_cast<uintptr_t>(data_.data());
    first_ = (kLineWords - (addr / sizeof(uint64_t)) % kLineWords) % kLineWords;
    const size_t routers = static_cast<size_t>(rows) * static_cast<size_t>(cols);
    routers_ = routers;
    slot_of.assign(routers * static_cast<size_t>(count_), kNoSlot);
    entries.assign(2 * routers * static_cast<size_t>(count_), Wavelet{});
    forwarded.assign(routers * static_cast<size_t>(count_), 0);
    queued.assign(routers, 0);
    occupancy_sum.assign(routers, 0);
    occupancy_max.assign(routers, 0);
    offers.assign(routers, Wavelet{});
  }
  void clear_planes() { std::fill(data_.begin(), data_.end(), 0); }

  int count() const { return count_; }
  Dir dir(int k) const { return dirs_[k]; }
  int index(Dir d) const { return index_[d]; }
  size_t words() const { return words_; }

  // The planes of `row`; each is words() words.
  uint64_t* has_one(int row, int k) { return plane(row, k); }
  uint64_t* has_two(int row, int k) { return plane(row, count_ + k); }
  uint64_t* head(int row, int k) { return plane(row, 2 * count_ + k); }
  uint64_t* stall(int row, int k) { return plane(row, 3 * count_ + k); }
  uint64_t* tail(int row, int k) { return plane(row, 4 * count_ + k); }
  uint64_t* want(int row, int o, int k) { return plane(row, 5 * count_ + o * count_ + k); }
  uint64_t* last(int row, int o, int k) {
    return plane(row, 5 * count_ + count_ * count_ + o * count_ + k);
  }
  uint64_t* live(int row) { return plane(row, 5 * count_ + 2 * count_ * count_); }
  uint64_t* ramp_open(int row) { return plane(row, 5 * count_ + 2 * count_ * count_ + 1); }
  uint64_t* ramp_limited(int row) { return plane(row, 5 * count_ + 2 * count_ * count_ + 2); }

  // Per routing case (PacketRouteTable::case_of): the compact direction it sends to.
  int8_t route_case[9] = {};

  // Per compact direction and router, at(k, id): the queue's slot in the arena (kNoSlot:
  // no such input), its two entries (from queue(k, id) on; by direction first, so a row's
  // queues of one input are neighbours in memory), and wavelets it forwarded since
  // begin_run.
  size_t at(int k, uint32_t id) const { return static_cast<size_t>(k) * routers_ + id; }
  Wavelet* queue(int k, uint32_t id) { return &entries[2 * at(k, id)]; }
  std::vector<uint32_t> slot_of;
  std::vector<Wavelet> entries;
  std::vector<uint32_t> forwarded;
  // Per router, what the Router keeps outside a run: wavelets queued, and the occupancy
  // counters (dense here, so a row's update is a few vector operations).
  std::vector<uint32_t> queued;
  std::vector<uint64_t> occupancy_sum;
  std::vector<uint32_t> occupancy_max;
  // Per router, the on-ramp offer of this cycle's phase A, for its phase B.
  std::vector<Wavelet> offers;

 private:
  static constexpr size_t kLineWords = 64 / sizeof(uint64_t);
  uint64_t* plane(int row, int i) {
    return &data_[first_ + static_cast<size_t>(row) * stride_ + static_cast<size_t>(i) * words_];
  }

  int count_ = 0;
  size_t routers_ = 0;
  Dir dirs_[kMaxDirs] = {};
  int8_t index_[kNumDirs] = {};
  size_t words_ = 0;
  size_t stride_ = 0;  // words per row block: whole cache lines (rows run in other threads)
  size_t first_ = 0;
  std::vector<uint64_t> data_;
};

}  // namespace wafersim::fabric
