// The 128-bit vector-engine instruction (seed 002, Fig. 7, [0087]-[0093]): a triad of one
// load, one ALU and one store component, or the long format of the mask move. Field
// positions and opcodes come from the generated vector_isa_table.hpp (source of truth:
// python/wafersim/asm/vector_isa.json). decode() validates every field, so the engine only
// ever executes well-formed bundles.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "wafersim/tensor/vector_isa_table.hpp"

namespace wafersim::tensor {

// 128 bits as two little-endian 64-bit words: bit i of the bundle is bit (i % 64) of word i/64.
struct Bundle {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const Bundle&, const Bundle&) = default;
};

// Bits [lsb, lsb + width) of a bundle, width <= 64.
uint64_t bundle_field(const Bundle& b, int lsb, int width);
inline uint64_t bundle_field(const Bundle& b, isa::Field f) { return bundle_field(b, f.lsb, f.width); }

struct LoadSlot {
  isa::LoadKind kind = isa::LoadKind::nop;
  const char* mnemonic = "NOP";
  isa::RegFile file = isa::RegFile::none;
  int reg = 0;
};

struct AluSlot {
  isa::AluKind kind = isa::AluKind::nop;
  const isa::AluOpInfo* info = nullptr;
  int rd = 0, rs1 = 0, rs2 = 0, rs3 = 0;
  int size_code = 0;       // 0 = 8, 1 = 16, 2 = 32, 3 = fp32
  bool mask_bit = false;   // cfg M
  bool imm_valid = false;  // cfg V
  bool predicate = false;  // cfg P: write back only lanes whose M0 bit is 1
  uint32_t imm = 0;

  int bits() const { return size_code == 0 ? 8 : size_code == 1 ? 16 : 32; }
  bool is_fp() const { return size_code == 3; }
};

struct StoreSlot {
  isa::StoreKind kind = isa::StoreKind::nop;
  const char* mnemonic = "NOP";
  isa::RegFile file = isa::RegFile::none;
  int reg = 0;
};

struct MaskMove {
  int mask = 0;
  std::array<uint8_t, 12> imm{};  // 96 bits, bit i of the immediate = lane i
};

struct DecodedBundle {
  bool is_long = false;
  LoadSlot load;
  AluSlot alu;
  StoreSlot store;
  MaskMove mask_move;  // only when is_long
};

// Decodes and validates; throws ProgramError naming the field (and the bundle's index in
// its program when `where` is given, e.g. "bundle 3").
DecodedBundle decode(const Bundle& b, const std::string& where = "");

// Quantization immediate fields ([0027] rule, wafersim's layout).
struct QuantParams {
  int scale;  // imm[15:0] as int16
  int shift;  // imm[20:16]
  int zero_point;  // imm[31:24] as int8
};
QuantParams quant_params(uint32_t imm);

}  // namespace wafersim::tensor
