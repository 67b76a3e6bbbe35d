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
  explicit PeMemory(uint32_t bytes) : size_(bytes) {}

  uint32_t size() const { return size_; }
  bool allocated() const { return !bytes_.empty(); }
  bool in_range(uint64_t addr, uint64_t n) const { return addr + n <= size_; }

  // Little-endian reads and writes of 1..8 bytes; the range must have been checked.
  uint64_t read_le(uint32_t addr, int n) const {
    if (bytes_.empty()) return 0;
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + addr, static_cast<size_t>(n));
    return v;
  }
  void write_le(uint32_t addr, int n, uint64_t v) {
    ensure();
    std::memcpy(bytes_.data() + addr, &v, static_cast<size_t>(n));
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
    std::memcpy(bytes_.data() + addr, in.data(), in.size());
  }

 private:
  void ensure() {
    if (bytes_.empty()) bytes_.assign(size_, 0);
  }
  uint32_t size_;
  std::vector<uint8_t> bytes_;
};

}  // namespace wafersim::pe
