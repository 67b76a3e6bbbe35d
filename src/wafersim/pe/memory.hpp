// Memory 854 of one PE [0364], [0700]: byte-addressed, allocated on the first write so an
// idle PE costs nothing. The low `data_bytes` hold data (reachable by 15-bit descriptor
// addresses [0522]); the top `code_bytes` hold instructions, three 20-bit instructions per
// little-endian 64-bit word [0348]. Callers check ranges and name the context in errors.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace wafersim::pe {

class PeMemory {
 public:
  // `code_start`: where the code region begins; writes that reach it bump code_version().
  PeMemory(uint32_t bytes, uint32_t code_start) : size_(bytes), code_start_(code_start) {}

  uint32_t size() const { return size_; }
  bool allocated() const { return !bytes_.empty(); }
  bool in_range(uint64_t addr, uint64_t n) const { return addr + n <= size_; }

  // Little-endian reads and writes of 1..8 bytes; the range must have been checked.
  uint64_t read_le(uint32_t addr, int n) const {
    if (bytes_.empty()) return 0;
    const uint8_t* p = bytes_.data() + addr;
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
    ensure();
    note_write(addr, static_cast<uint32_t>(n));
    uint8_t* p = bytes_.data() + addr;
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
    if (bytes_.empty()) {
      std::memset(out.data(), 0, out.size());
    } else {
      std::memcpy(out.data(), bytes_.data() + addr, out.size());
    }
  }
  void write(uint32_t addr, std::span<const uint8_t> in) {
    if (in.empty()) return;
    ensure();
    note_write(addr, static_cast<uint32_t>(in.size()));
    std::memcpy(bytes_.data() + addr, in.data(), in.size());
  }

  // The bytes, allocated, for a loop that has checked its addresses itself; writes
  // through the pointer must stay below the code region (code_version() does not see them).
  uint8_t* data() {
    ensure();
    return bytes_.data();
  }

  // Grows whenever a write reaches the code region: decoded instructions older than
  // this are stale.
  uint64_t code_version() const { return code_version_; }

 private:
  void ensure() {
    if (bytes_.empty()) bytes_.assign(size_, 0);
  }
  void note_write(uint32_t addr, uint32_t n) {
    if (addr + n > code_start_) ++code_version_;
  }
  uint32_t size_;
  uint32_t code_start_;
  uint64_t code_version_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace wafersim::pe
