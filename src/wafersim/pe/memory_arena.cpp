#include "wafersim/pe/memory_arena.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define WAFERSIM_HAVE_MMAP 1
#endif

namespace wafersim::pe {

namespace {

// A mapping of this size at most: small enough for any overcommit policy to grant it
// without reserving the whole wafer's memory up front, large enough that a wafer of a
// million PEs needs under a thousand mappings.
constexpr size_t kChunkBytes = size_t{64} << 20;

size_t page_bytes() {
#ifdef WAFERSIM_HAVE_MMAP
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : 4096;
#else
  return 4096;
#endif
}

uint8_t* map_zeroed(size_t bytes) {
#ifdef WAFERSIM_HAVE_MMAP
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
  flags |= MAP_NORESERVE;  // committed page by page, as pages are touched
#endif
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_NOHUGEPAGE
  // A huge page would make a whole run of PEs resident at the first write to one of them.
  madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
  return static_cast<uint8_t*>(p);
#else
  void* p = std::calloc(bytes, 1);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
#endif
}

void unmap(uint8_t* p, size_t bytes) {
#ifdef WAFERSIM_HAVE_MMAP
  munmap(p, bytes);
#else
  (void)bytes;
  std::free(p);
#endif
}

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
    if (c != nullptr) unmap(c, chunk_slots_ * stride_);
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
