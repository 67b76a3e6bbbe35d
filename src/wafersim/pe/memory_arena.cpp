#include "wafersim/pe/memory_arena.hpp"

#include <algorithm>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "wafersim/zeroed_pages.hpp"

namespace wafersim::pe {

namespace {

// A mapping of this size at most: small enough for any overcommit policy to grant it
// without reserving the whole wafer's memory up front, large enough that a wafer of a
// million PEs needs under a thousand mappings.
constexpr size_t kChunkBytes = size_t{64} << 20;

}  // namespace

MemoryArena::MemoryArena(size_t slots, size_t slot_bytes)
    : slots_(slots), slot_bytes_(slot_bytes) {
  const size_t page = page_bytes();
  stride_ = std::max<size_t>(page, (slot_bytes + page - 1) / page * page);
  chunk_slots_ = std::max<size_t>(1, std::min(slots, kChunkBytes / stride_));
  chunks_.assign((slots + chunk_slots_ - 1) / chunk_slots_, nullptr);
}

MemoryArena::~MemoryArena() {
  for (uint8_t* c : chunks_) {
    if (c != nullptr) unmap_zeroed(c, chunk_slots_ * stride_);
  }
}

uint8_t* MemoryArena::slot(size_t i) {
  uint8_t*& chunk = chunks_[i / chunk_slots_];
  if (chunk == nullptr) chunk = map_zeroed(chunk_slots_ * stride_);
  return chunk + (i % chunk_slots_) * stride_;
}

void MemoryArena::clear(size_t i) {
  uint8_t* chunk = chunks_[i / chunk_slots_];
  if (chunk == nullptr) return;  // never mapped: still zero
  uint8_t* p = chunk + (i % chunk_slots_) * stride_;
#if defined(__linux__)
  // Private anonymous pages read as zeros again after this, and stop counting as resident.
  if (madvise(p, stride_, MADV_DONTNEED) == 0) return;
#endif
  std::memset(p, 0, slot_bytes_);
}

}  // namespace wafersim::pe
