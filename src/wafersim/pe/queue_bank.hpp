// A bank of per-color wavelet FIFOs of one capacity: the CE's Input Qs 897 (one virtual
// queue per fabric and local color [0341]) and Output Queues 859 (one per fabric color
// [0360]). Storage grows on a push to a queue above those it has, in steps of eight queues,
// so an idle PE costs a few bytes and one that uses colors 3..7 holds eight queues, not 64.
//
// Why steps of eight, not one queue at a time: a bank grows during a run, in whichever
// thread runs its row that cycle, and growing frees the old storage. A block freed by
// another thread than the one that allocated it goes back to that thread's malloc arena
// under the arena's lock, and a thread that finds the lock taken sleeps (about 100 us to
// wake on a virtual machine) while the cycle waits for it. Growing one queue at a time,
// program 3's PEs freed once each (colors 3, then 4 or 5): 4,000 such sleeps in a one
// second run on 256 x 256 PEs with 2 threads (docs/scale.md). With steps of eight they
// allocate once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "wafersim/errors.hpp"
#include "wafersim/fabric/wavelet.hpp"

namespace wafersim::pe {

class QueueBank {
 public:
  static constexpr int kMaxQueues = fabric::kMaxColorIds;

  // `crowded_above`: a queue holding more wavelets than this is crowded (the input
  // queues' stall level toward the router); by default none ever is.
  QueueBank(int queues, int capacity, int crowded_above = -1)
      : queues_(queues), capacity_(capacity),
        crowded_above_(crowded_above < 0 ? capacity : crowded_above) {}

  int queues() const { return queues_; }
  int capacity() const { return capacity_; }
  int size(int q) const { return q < allocated_ ? state_[q].count : 0; }
  bool empty(int q) const { return size(q) == 0; }
  bool full(int q) const { return size(q) >= capacity_; }
  int space(int q) const { return capacity_ - size(q); }
  fabric::ColorMask nonempty() const { return nonempty_; }
  // The queues holding more than `crowded_above` wavelets, kept up to date by push and
  // pop so that a reader each cycle need not count.
  fabric::ColorMask crowded() const { return crowded_; }

  // The i-th oldest wavelet of queue q (i < size(q)).
  const fabric::Wavelet& at(int q, int i) const {
    return storage_[slot(q, (state_[q].head + i) % capacity_)];
  }
  const fabric::Wavelet& front(int q) const { return at(q, 0); }

  void push(int q, const fabric::Wavelet& w) {
    if (full(q)) internal_error("push into a full CE queue (color " + std::to_string(q) + ")");
    if (q >= allocated_) grow(std::min(queues_, (q + kGrowStep) & ~(kGrowStep - 1)));
    State& st = state_[q];
    storage_[slot(q, (st.head + st.count) % capacity_)] = w;
    const fabric::ColorMask bit = fabric::ColorMask{1} << q;
    nonempty_ |= bit;
    if (++st.count > crowded_above_) crowded_ |= bit;
  }
  fabric::Wavelet pop(int q) {
    if (empty(q)) internal_error("pop from an empty CE queue (color " + std::to_string(q) + ")");
    State& st = state_[q];
    fabric::Wavelet w = storage_[slot(q, st.head)];
    st.head = static_cast<uint8_t>((st.head + 1) % capacity_);
    const fabric::ColorMask bit = fabric::ColorMask{1} << q;
    if (--st.count <= crowded_above_) crowded_ &= ~bit;
    if (st.count == 0) nonempty_ &= ~bit;
    return w;
  }

 private:
  struct State {
    uint8_t head = 0, count = 0;
  };
  static constexpr int kGrowStep = 8;  // queues added at a time (a power of two)
  // Room for queues 0..n-1; the queues below the old count keep their slots.
  void grow(int n) {
    auto bigger = std::make_unique<fabric::Wavelet[]>(slot(n, 0));
    std::copy(storage_.get(), storage_.get() + slot(allocated_, 0), bigger.get());
    auto states = std::make_unique<State[]>(static_cast<size_t>(n));
    std::copy(state_.get(), state_.get() + allocated_, states.get());
    storage_ = std::move(bigger);
    state_ = std::move(states);
    allocated_ = n;
  }
  size_t slot(int q, int i) const {
    return static_cast<size_t>(q) * static_cast<size_t>(capacity_) + static_cast<size_t>(i);
  }
  // The masks, then a queue's head and count, kept apart from the wavelets (and this
  // object small) so that the masks of a CE's two banks share a cache line.
  fabric::ColorMask nonempty_ = 0, crowded_ = 0;
  int queues_, capacity_, crowded_above_;
  int allocated_ = 0;  // queues with storage: 0..allocated_-1
  std::unique_ptr<State[]> state_;
  std::unique_ptr<fabric::Wavelet[]> storage_;
};

}  // namespace wafersim::pe
