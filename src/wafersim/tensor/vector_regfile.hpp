// The vector engine's register file (seed 002, Fig. 4B, [0057], [0062]-[0064]): 8 registers
// RD0-RD7 of `lanes` x 32 bits, aliased as RW0-RW15 (16-bit) and RB0-RB31 (8-bit).
// RBk is byte (k & 3) of RD(k >> 2) and RWk is half (k & 1) of RD(k >> 1) in every lane;
// byte 0 is the least significant (little-endian, wafersim's choice). Storage is one
// uint32 per lane and register, so the aliasing is arithmetic and host-endian independent.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "wafersim/tensor/vector_isa_table.hpp"

namespace wafersim::tensor {

class VectorRegFile {
 public:
  static constexpr int kRdCount = 8;

  explicit VectorRegFile(int lanes);

  int lanes() const { return lanes_; }

  // Number of registers in a file (RB 32, RW 16, RD 8); throws for M/none.
  static int count(isa::RegFile file);
  // Bits per lane of a file (8, 16, 32).
  static int bits(isa::RegFile file);
  // The file a cfg.size code (0 = 8, 1 = 16, 2 = 32, 3 = fp32) addresses.
  static isa::RegFile file_for_size(int size_code);

  // Lane value of an aliased register, zero-extended to 32 bits.
  uint32_t read(isa::RegFile file, int index, int lane) const {
    const Alias a = alias(file, index);
    return (rd_[a.rd * lanes_ + lane] >> a.shift) & a.mask;
  }
  // Writes only the bytes of the alias; the other bytes of the RD register keep their value.
  void write(isa::RegFile file, int index, int lane, uint32_t value) {
    const Alias a = alias(file, index);
    uint32_t& w = rd_[a.rd * lanes_ + lane];
    w = (w & ~(a.mask << a.shift)) | ((value & a.mask) << a.shift);
  }

  // Raw RD storage, register-major: rd(r)[lane].
  std::span<uint32_t> rd(int r) { return {rd_.data() + r * lanes_, static_cast<size_t>(lanes_)}; }
  std::span<const uint32_t> rd(int r) const {
    return {rd_.data() + r * lanes_, static_cast<size_t>(lanes_)};
  }
  void clear();

  // Throws MemoryAccessError naming the register if `index` is out of range for `file`.
  static void check(isa::RegFile file, int index, const char* field);

 private:
  struct Alias {
    int rd;
    int shift;
    uint32_t mask;
  };
  static Alias alias(isa::RegFile file, int index) {
    switch (file) {
      case isa::RegFile::RB: return {index >> 2, 8 * (index & 3), 0xFFu};
      case isa::RegFile::RW: return {index >> 1, 16 * (index & 1), 0xFFFFu};
      default: return {index, 0, 0xFFFFFFFFu};
    }
  }

  int lanes_;
  std::vector<uint32_t> rd_;
};

// Name of a register as the assembler writes it ("RB5", "RD1", "M0").
const char* file_name(isa::RegFile file);

}  // namespace wafersim::tensor
