// Counters indexed 0..N-1 of which one compute element uses a few: a PE counts cycles
// for a handful of its 64 ids and issues a dozen of the 87 opcodes. A dense array of N
// 64-bit words per PE (512 bytes for 64 ids) is mostly zeros, and on a wafer of 750,000
// PEs those zeros are gigabytes of pages the kernel must fault in and clear during the
// first cycles (docs/scale.md). Here a byte per index names its slot; the first `Inline`
// indices used get slots in the object, and the one after them moves every counter to a
// dense heap array of N (what the dense layout held, for the few PEs that use many).
//
// Not copyable or movable: the slots' base pointer points into the object itself.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace wafersim::pe {

template <int N, int Inline>
class FewCounters {
  static_assert(N > Inline && N < 255, "a slot number fits a byte, and 0 means none");

 public:
  FewCounters() = default;
  FewCounters(const FewCounters&) = delete;
  FewCounters& operator=(const FewCounters&) = delete;

  static constexpr int size() { return N; }

  // The counter of index i (0 <= i < N), made at zero on first use.
  uint64_t& operator[](int i) {
    const uint8_t s = slot_[static_cast<size_t>(i)];
    return s != 0 ? at_[s - 1] : add(i);
  }
  uint64_t get(int i) const {
    const uint8_t s = slot_[static_cast<size_t>(i)];
    return s != 0 ? at_[s - 1] : 0;
  }
  // All N counters into a dense array.
  void copy_to(std::array<uint64_t, N>& out) const {
    for (int i = 0; i < N; ++i) out[static_cast<size_t>(i)] = get(i);
  }

 private:
  uint64_t& add(int i) {
    if (!all_ && used_ < Inline) {
      slot_[static_cast<size_t>(i)] = ++used_;
      return at_[used_ - 1];
    }
    if (!all_) {  // the slots are full: from now on index i lives at all_[i]
      all_ = std::make_unique<uint64_t[]>(N);  // zeroed
      for (int j = 0; j < N; ++j) {
        uint8_t& s = slot_[static_cast<size_t>(j)];
        if (s == 0) continue;
        all_[static_cast<size_t>(j)] = at_[s - 1];
        s = static_cast<uint8_t>(j + 1);
      }
      at_ = all_.get();
    }
    slot_[static_cast<size_t>(i)] = static_cast<uint8_t>(i + 1);
    return at_[i];
  }

  std::array<uint8_t, N> slot_{};  // 0: not counted yet; s: at_[s - 1]
  uint8_t used_ = 0;               // inline slots taken
  std::array<uint64_t, Inline> inline_{};
  uint64_t* at_ = inline_.data();  // inline_, or all_ once it exists
  std::unique_ptr<uint64_t[]> all_;
};

}  // namespace wafersim::pe
