// Zero-filled storage for the memories of many PEs that costs nothing until it is touched:
// slots of one size carved out of large anonymous mappings, which the operating system
// backs page by page on the first write (a read of an untouched page sees zeros and takes
// no memory). A wafer keeps one arena per PE memory size, slot i for router i, so a PE
// that touches two pages of its 48 KiB holds two pages (docs/scale.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wafersim::pe {

class MemoryArena {
 public:
  // Room for `slots` slots of `slot_bytes` bytes each; nothing is mapped yet.
  MemoryArena(size_t slots, size_t slot_bytes);
  ~MemoryArena();
  MemoryArena(const MemoryArena&) = delete;
  MemoryArena& operator=(const MemoryArena&) = delete;

  size_t slots() const { return slots_; }
  size_t slot_bytes() const { return slot_bytes_; }

  // The `slot_bytes` bytes of slot i (i < slots), zero until written; maps the chunk of
  // slots around it on first use. Throws std::bad_alloc when the system refuses.
  uint8_t* slot(size_t i);
  // Zeroes slot i again, handing its touched pages back to the system where it can.
  void clear(size_t i);

 private:
  size_t slots_;
  size_t slot_bytes_;
  size_t stride_;        // slot_bytes_ rounded up to whole pages
  size_t chunk_slots_;   // slots per mapping
  std::vector<uint8_t*> chunks_;  // nullptr: not mapped yet
};

}  // namespace wafersim::pe
