// Memory 854 of one PE [0364], [0700]: byte-addressed, zero at the start, held in a slot of
// a MemoryArena whose pages the system backs only once touched, so an idle or small PE
// costs a page or two (docs/scale.md). The low `data_bytes` hold data (reachable by 15-bit
// descriptor addresses [0522]); the top `code_bytes` hold instructions, three 20-bit
// instructions per little-endian 64-bit word [0348]. Callers check ranges and name the context in errors.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "wafersim/pe/memory_arena.hpp"

namespace wafersim::pe {

class PeMemory {
 public:
  // `code_start`: where the code region begins; writes that reach it bump code_version().
  // `storage`: `bytes` zero bytes that outlive this memory (a wafer's arena slot), or
  // nullptr for an arena of its own.
  PeMemory(uint32_t bytes, uint32_t code_start, uint8_t* storage = nullptr)
      : size_(bytes), code_start_(code_start), bytes_(storage) {
    if (bytes_ == nullptr) {
      own_ = std::make_unique<MemoryArena>(1, bytes);
      bytes_ = own_->slot(0);
    }
  }

  uint32_t size() const { return size_; }
  bool in_range(uint64_t addr, uint64_t n) const { return addr + n <= size_; }

  // Little-endian reads and writes of 1..8 bytes; the range must have been checked.
  uint64_t read_le(uint32_t addr, int n) const {
    const uint8_t* p = bytes_ + addr;
    // Fixed-size copies into a variable of that size: no partial-store stalls.
    switch (n) {
      case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
      case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
      case 8: { uint64_t v; std::memcpy(&v, p, 8); return v; }
      default: {
        uint64_t v = 0;
        for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
        return v;
      }
    }
  }
  void write_le(uint32_t addr, int n, uint64_t v) {
    note_write(addr, static_cast<uint32_t>(n));
    uint8_t* p = bytes_ + addr;
    switch (n) {
      case 2: { const uint16_t w = static_cast<uint16_t>(v); std::memcpy(p, &w, 2); return; }
      case 4: { const uint32_t w = static_cast<uint32_t>(v); std::memcpy(p, &w, 4); return; }
      case 8: std::memcpy(p, &v, 8); return;
      default:
        for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
    }
  }
  uint16_t read16(uint32_t addr) const { return static_cast<uint16_t>(read_le(addr, 2)); }
  void write16(uint32_t addr, uint16_t v) { write_le(addr, 2, v); }

  void read(uint32_t addr, std::span<uint8_t> out) const {
    if (!out.empty()) std::memcpy(out.data(), bytes_ + addr, out.size());
  }
  void write(uint32_t addr, std::span<const uint8_t> in) {
    if (in.empty()) return;
    note_write(addr, static_cast<uint32_t>(in.size()));
    std::memcpy(bytes_ + addr, in.data(), in.size());
  }

  // The bytes, for a loop that has checked its addresses itself; writes through the
  // pointer must stay below the code region (code_version() does not see them).
  uint8_t* data() { return bytes_; }

  // Grows whenever a write reaches the code region: decoded instructions older than
  // this are stale.
  uint64_t code_version() const { return code_version_; }

 private:
  void note_write(uint32_t addr, uint32_t n) {
    if (addr + n > code_start_) ++code_version_;
  }
  uint32_t size_;
  uint32_t code_start_;
  uint64_t code_version_ = 0;
  uint8_t* bytes_;
  std::unique_ptr<MemoryArena> own_;  // a lone PE's storage; null on a wafer
};

}  // namespace wafersim::pe
