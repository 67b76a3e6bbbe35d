// A compute element's counters by id or color (the same 64 numbers): busy cycles and
// tasks started by id, wavelets received and filtered by color. A PE counts few ids
// (program 3: 3 or 4, its input colors and its tasks), so the first eight ids it counts
// get a row each in the record, found through 4 bits per id, and a PE that counts a ninth
// moves every row to full arrays, made then: on a wafer of 750,000 PEs the four dense
// arrays of 64 were 0.6 GB of zeros to fault in during the run's first cycles
// (docs/scale.md). Counts are 64-bit, kept in 32 bits with the high halves apart, as in
// Counters32. The map and the first column (busy cycles, counted on every cycle a task
// runs) share one cache line, so that counting them touches one line, as the dense array
// of that column did.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::pe {

template <int Columns>
class alignas(64) IdCounters32 {
  static_assert(Columns >= 1);

 public:
  static constexpr int kIds = fabric::kMaxColorIds;
  static constexpr int kRows = 8;  // ids counted in the record itself
  static_assert(kIds / 2 + kRows * sizeof(uint32_t) == 64,
                "the map and the first column fill the table's first cache line");

  IdCounters32() = default;
  IdCounters32(const IdCounters32&) = delete;
  IdCounters32& operator=(const IdCounters32&) = delete;

  void increment(int column, int id) {
    if (++low(column, id) == 0) [[unlikely]] carry(column, id, 1);
  }
  void add(int column, int id, uint64_t n) {
    uint32_t& lo = low(column, id);
    const uint64_t sum = uint64_t{lo} + n;
    lo = static_cast<uint32_t>(sum);
    if (sum >> 32) [[unlikely]] carry(column, id, sum >> 32);
  }
  uint64_t get(int column, int id) const {
    const size_t k = at(column, id);
    const uint64_t high = high_ ? high_[k] : 0;
    uint64_t lo = 0;
    if (wide_) {
      lo = wide_[k];
    } else if (const unsigned row = row_of(id); row != 0) {
      lo = cols_[static_cast<size_t>(column)][row - 1];
    }
    return (high << 32) + lo;
  }
  void copy_to(int column, std::array<uint64_t, kIds>& out) const {
    for (int id = 0; id < kIds; ++id) out[static_cast<size_t>(id)] = get(column, id);
  }

 private:
  static size_t at(int column, int id) {
    return static_cast<size_t>(column) * kIds + static_cast<size_t>(id);
  }
  unsigned row_of(int id) const {  // 1 + the row of `id`; 0: none (or wide_)
    return (map_[static_cast<size_t>(id) >> 1] >> ((id & 1) * 4)) & 15u;
  }
  void set_row(int id, unsigned row) {
    uint8_t& m = map_[static_cast<size_t>(id) >> 1];
    const int shift = (id & 1) * 4;
    m = static_cast<uint8_t>((m & ~(15u << shift)) | (row << shift));
  }
  uint32_t& low(int column, int id) {
    if (const unsigned row = row_of(id); row != 0) [[likely]] {
      return cols_[static_cast<size_t>(column)][row - 1];
    }
    return low_elsewhere(column, id);
  }
  // An id without a row: give it the next free one, or count in the full arrays.
  [[gnu::noinline]] uint32_t& low_elsewhere(int column, int id) {
    if (!wide_ && used_ < kRows) {
      set_row(id, ++used_);
      return cols_[static_cast<size_t>(column)][used_ - 1];
    }
    if (!wide_) {  // a ninth id: every row moves to the full arrays, for good
      wide_ = std::make_unique<uint32_t[]>(static_cast<size_t>(Columns) * kIds);  // zeroed
      for (int other = 0; other < kIds; ++other) {
        const unsigned row = row_of(other);
        if (row == 0) continue;
        for (int c = 0; c < Columns; ++c) {
          wide_[at(c, other)] = cols_[static_cast<size_t>(c)][row - 1];
        }
        set_row(other, 0);
      }
    }
    return wide_[at(column, id)];
  }
  void carry(int column, int id, uint64_t up) {
    if (!high_) high_ = std::make_unique<uint32_t[]>(static_cast<size_t>(Columns) * kIds);
    high_[at(column, id)] += static_cast<uint32_t>(up);
  }

  std::array<uint8_t, kIds / 2> map_{};  // row_of(id): 4 bits per id
  std::array<std::array<uint32_t, kRows>, Columns> cols_{};  // low halves, by column, row
  uint8_t used_ = 0;                     // rows given out
  std::unique_ptr<uint32_t[]> wide_;  // low halves by column then id, once a ninth id counts
  std::unique_ptr<uint32_t[]> high_;  // by column then id, once a counter passes 2^32
};

}  // namespace wafersim::pe
