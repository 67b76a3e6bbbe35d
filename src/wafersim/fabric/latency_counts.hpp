// Delivered wavelets counted by latency in a bounded number of bins (docs/fabric.md,
// "Latency counters"): one bin per latency below kExact cycles, and above it kSubBins bins
// per power of two, so a bin is never wider than 1/kSubBins of the latencies it holds.
// Latencies are 64-bit; the count, the exact sum (128 bits) and the largest latency are
// kept beside the bins. The bins grow only up to the highest one used, at most kMaxBins
// (17,408 bins, 136 KiB, for latencies near 2^64): a run whose wavelets waited a million cycles costs a few thousand bins, not a
// million, and nothing here grows with run length or queue depth.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wafersim::fabric {

class LatencyCounts {
 public:
  static constexpr int kExactBits = 12;
  static constexpr uint64_t kExact = uint64_t{1} << kExactBits;  // 4096: exact below
  static constexpr int kSubBits = 8;
  static constexpr uint64_t kSubBins = uint64_t{1} << kSubBits;  // 256 bins per octave
  static constexpr size_t kMaxBins = kExact + (64 - kExactBits) * kSubBins;

  // The bin of a latency, and the smallest and largest latency a bin holds.
  static size_t bin_of(uint64_t latency) {
    if (latency < kExact) return static_cast<size_t>(latency);
    const int octave = std::bit_width(latency) - 1;  // >= kExactBits
    const uint64_t sub = (latency >> (octave - kSubBits)) & (kSubBins - 1);
    return static_cast<size_t>(kExact + static_cast<uint64_t>(octave - kExactBits) * kSubBins + sub);
  }
  static uint64_t bin_low(size_t bin) {
    if (bin < kExact) return bin;
    const uint64_t k = bin - kExact;
    const int shift = static_cast<int>(k / kSubBins) + kExactBits - kSubBits;
    return (kSubBins + k % kSubBins) << shift;
  }
  static uint64_t bin_high(size_t bin) {
    if (bin < kExact) return bin;
    const int shift = static_cast<int>((bin - kExact) / kSubBins) + kExactBits - kSubBits;
    return bin_low(bin) + ((uint64_t{1} << shift) - 1);
  }

  void add(uint64_t latency, uint64_t n = 1) {
    if (n == 0) return;
    const size_t b = bin_of(latency);
    if (b >= bins_.size()) bins_.resize(b + 1, 0);
    bins_[b] += n;
    count_ += n;
    add_to_sum(latency, n);
    max_ = std::max(max_, latency);
  }

  void merge(const LatencyCounts& o) {
    if (o.count_ == 0) return;
    if (o.bins_.size() > bins_.size()) bins_.resize(o.bins_.size(), 0);
    for (size_t i = 0; i < o.bins_.size(); ++i) bins_[i] += o.bins_[i];
    count_ += o.count_;
    const uint64_t lo = sum_lo_ + o.sum_lo_;
    sum_hi_ += o.sum_hi_ + (lo < sum_lo_ ? 1 : 0);
    sum_lo_ = lo;
    max_ = std::max(max_, o.max_);
  }

  // Empties the counts, keeping the bins' memory for the next run.
  void clear() {
    bins_.clear();
    count_ = max_ = sum_lo_ = sum_hi_ = 0;
  }

  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }  // 0 when empty
  // The sum of all latencies: sum_hi() * 2^64 + sum_lo().
  uint64_t sum_lo() const { return sum_lo_; }
  uint64_t sum_hi() const { return sum_hi_; }
  // Counts per bin, up to the highest bin used.
  const std::vector<uint64_t>& bins() const { return bins_; }

  // Counts taken apart by the accessors above, put back (pickling: a wafer split over
  // several processes merges its domains' counts).
  static LatencyCounts from_parts(std::vector<uint64_t> bins, uint64_t count, uint64_t max,
                                  uint64_t sum_lo, uint64_t sum_hi) {
    LatencyCounts c;
    c.bins_ = std::move(bins);
    c.count_ = count;
    c.max_ = max;
    c.sum_lo_ = sum_lo;
    c.sum_hi_ = sum_hi;
    return c;
  }

  bool operator==(const LatencyCounts&) const = default;

 private:
  void add_to_sum(uint64_t latency, uint64_t n) {
    // latency * n in 128 bits, from 32-bit halves.
    const uint64_t a_lo = latency & 0xFFFFFFFFu, a_hi = latency >> 32;
    const uint64_t b_lo = n & 0xFFFFFFFFu, b_hi = n >> 32;
    const uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
    const uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
    const uint64_t lo = (ll & 0xFFFFFFFFu) | (mid << 32);
    const uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    const uint64_t s = sum_lo_ + lo;
    sum_hi_ += hi + (s < sum_lo_ ? 1 : 0);
    sum_lo_ = s;
  }

  std::vector<uint64_t> bins_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_lo_ = 0, sum_hi_ = 0;
};

}  // namespace wafersim::fabric
