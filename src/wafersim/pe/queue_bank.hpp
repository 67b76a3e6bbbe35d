// A bank of per-color wavelet FIFOs of one capacity: the CE's Input Qs 897 (one virtual
// queue per fabric and local color [0341]) and Output Queues 859 (one per fabric color
// [0360]). A queue gets storage on its first push: a slot, found through a byte per
// color, in a block of slots that holds two queues at first and grows by eight when a
// queue needs a slot and none is free. An idle PE costs a few bytes, and one that uses
// two colors holds two queues, not 64 (nor eight: docs/scale.md, "Queue banks by the
// colors used").
//
// Why not one queue at a time: a bank grows during a run, in whichever thread runs its row
// that cycle, and growing frees the old storage. A block freed by another thread than the
// one that allocated it goes back to that thread's malloc arena under the arena's lock,
// and a thread that finds the lock taken sleeps (about 100 us to wake on a virtual
// machine) while the cycle waits for it. Growing one queue at a time, program 3's PEs
// freed once each (colors 3, then 4 or 5): 4,000 such sleeps in a one second run on 256 x
// 256 PEs with 2 threads (docs/scale.md). Its banks use one or two colors, so they
// allocate once; a bank of three to ten colors frees once.
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
  // (An empty queue's size is read from the mask: most queries touch no storage.)
  int size(int q) const { return (nonempty_ >> q) & 1u ? state(q).count : 0; }
  bool empty(int q) const { return ((nonempty_ >> q) & 1u) == 0; }
  bool full(int q) const { return size(q) >= capacity_; }
  int space(int q) const { return capacity_ - size(q); }
  fabric::ColorMask nonempty() const { return nonempty_; }
  // The queues holding more than `crowded_above` wavelets, kept up to date by push and
  // pop so that a reader each cycle need not count.
  fabric::ColorMask crowded() const { return crowded_; }

  // The i-th oldest wavelet of queue q (i < size(q)).
  const fabric::Wavelet& at(int q, int i) const {
    const int s = slot(q);
    return storage_[wavelet_index(s, (state_at(s).head + i) % capacity_)];
  }
  const fabric::Wavelet& front(int q) const { return at(q, 0); }

  void push(int q, const fabric::Wavelet& w) {
    if (full(q)) internal_error("push into a full CE queue (color " + std::to_string(q) + ")");
    int s = meta_ ? slot(q) : -1;
    if (s < 0) s = add_slot(q);
    State& st = state_at(s);
    storage_[wavelet_index(s, (st.head + st.count) % capacity_)] = w;
    const fabric::ColorMask bit = fabric::ColorMask{1} << q;
    nonempty_ |= bit;
    if (++st.count > crowded_above_) crowded_ |= bit;
  }
  fabric::Wavelet pop(int q) {
    if (empty(q)) internal_error("pop from an empty CE queue (color " + std::to_string(q) + ")");
    const int s = slot(q);
    State& st = state_at(s);
    fabric::Wavelet w = storage_[wavelet_index(s, st.head)];
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
  static constexpr int kFirstSlots = 2;  // slots of the first block
  static constexpr int kMoreSlots = 8;   // slots each growth adds
  // meta_: a byte per color (1 + its slot; 0: none), then the slots' States.
  static constexpr size_t kMapBytes = kMaxQueues;

  int slot(int q) const { return int{meta_[static_cast<size_t>(q)]} - 1; }
  State& state_at(int s) {
    return reinterpret_cast<State*>(meta_.get() + kMapBytes)[s];
  }
  const State& state_at(int s) const {
    return reinterpret_cast<const State*>(meta_.get() + kMapBytes)[s];
  }
  const State& state(int q) const { return state_at(slot(q)); }
  // Gives queue q the next slot, growing the block when it is full; the slots taken keep
  // their place.
  int add_slot(int q) {
    if (used_ == slots_) {
      const int n = std::min(slots_ == 0 ? kFirstSlots : slots_ + kMoreSlots, queues_);
      auto meta = std::make_unique<uint8_t[]>(meta_bytes(n));  // zeroed
      auto bigger = std::make_unique<fabric::Wavelet[]>(wavelet_index(n, 0));
      if (meta_) {
        std::copy(meta_.get(), meta_.get() + meta_bytes(slots_), meta.get());
        std::copy(storage_.get(), storage_.get() + wavelet_index(slots_, 0), bigger.get());
      }
      meta_ = std::move(meta);
      storage_ = std::move(bigger);
      slots_ = static_cast<uint8_t>(n);
    }
    meta_[static_cast<size_t>(q)] = ++used_;
    return used_ - 1;
  }
  static size_t meta_bytes(int slots) {
    return kMapBytes + sizeof(State) * static_cast<size_t>(slots);
  }
  size_t wavelet_index(int s, int i) const {
    return static_cast<size_t>(s) * static_cast<size_t>(capacity_) + static_cast<size_t>(i);
  }
  // The masks, then the slot counts, kept apart from the wavelets (and this object small)
  // so that the masks of a CE's two banks share a cache line.
  fabric::ColorMask nonempty_ = 0, crowded_ = 0;
  int queues_, capacity_, crowded_above_;
  uint8_t slots_ = 0;  // slots with storage (at most kMaxQueues)
  uint8_t used_ = 0;   // slots given to a queue: 0..used_-1
  std::unique_ptr<uint8_t[]> meta_;
  std::unique_ptr<fabric::Wavelet[]> storage_;
};

}  // namespace wafersim::pe
