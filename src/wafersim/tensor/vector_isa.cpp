#include "wafersim/tensor/vector_isa.hpp"

#include <cstdio>

#include "wafersim/errors.hpp"
#include "wafersim/tensor/vector_regfile.hpp"

namespace wafersim::tensor {

namespace {

// Opcode -> table entry, built once from the generated tables (nullptr = unknown opcode).
template <typename Info, size_t N>
std::array<const Info*, 256> lookup(const std::array<Info, N>& ops) {
  std::array<const Info*, 256> t{};
  for (const auto& op : ops) t[op.opcode] = &op;
  return t;
}

const auto kLoadByOpcode = lookup(isa::kLoadOps);
const auto kAluByOpcode = lookup(isa::kAluOps);
const auto kStoreByOpcode = lookup(isa::kStoreOps);
const auto kLongByOpcode = lookup(isa::kLongOps);

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
  return buf;
}

struct Checker {
  std::string where;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ProgramError((where.empty() ? "" : where + ": ") + "field " + field + ": " + what);
  }
  void zero(const Bundle& b, isa::Field f, const std::string& field, const std::string& why) const {
    if (f.width > 64) {
      if (bundle_field(b, f.lsb, 64) != 0 || bundle_field(b, f.lsb + 64, f.width - 64) != 0) {
        fail(field, "must be 0 (" + why + ")");
      }
      return;
    }
    const uint64_t v = bundle_field(b, f);
    if (v != 0) fail(field, "must be 0 (" + why + "), got " + hex(v));
  }
  void reg(isa::RegFile file, int index, const std::string& field, const char* mnemonic) const {
    const int n = VectorRegFile::count(file);
    if (index >= n) {
      fail(field, std::string(mnemonic) + " names " + file_name(file) + std::to_string(index) +
                      ", which does not exist (" + file_name(file) + "0-" + file_name(file) +
                      std::to_string(n - 1) + ")");
    }
  }
};

void decode_alu(const Bundle& b, AluSlot& a, const Checker& c) {
  using isa::Form;
  using isa::ImmMode;
  using isa::SizeClass;
  const uint64_t op = bundle_field(b, isa::kAluOp);
  const isa::AluOpInfo* info = kAluByOpcode[op];
  if (info == nullptr) c.fail("alu_op", "unknown ALU opcode " + hex(op));
  a.info = info;
  a.kind = info->kind;
  a.rd = static_cast<int>(bundle_field(b, isa::kAluRd));
  a.rs1 = static_cast<int>(bundle_field(b, isa::kAluRs1));
  a.rs2 = static_cast<int>(bundle_field(b, isa::kAluRs2));
  a.rs3 = static_cast<int>(bundle_field(b, isa::kAluRs3));
  const uint64_t cfg = bundle_field(b, isa::kAluCfg);
  a.size_code = static_cast<int>((cfg >> isa::kCfgSize.lsb) & 3u);
  a.mask_bit = (cfg >> isa::kCfgMask.lsb) & 1u;
  a.imm_valid = (cfg >> isa::kCfgImmValid.lsb) & 1u;
  a.predicate = (cfg >> isa::kCfgPredicate.lsb) & 1u;
  a.imm = static_cast<uint32_t>(bundle_field(b, isa::kAluImm));
  const char* mn = info->mnemonic;

  if (info->kind == isa::AluKind::nop) {
    for (auto [f, name] : {std::pair{isa::kAluRd, "alu_rd"}, {isa::kAluRs1, "alu_rs1"},
                           {isa::kAluRs2, "alu_rs2"}, {isa::kAluRs3, "alu_rs3"},
                           {isa::kAluCfg, "alu_cfg"}, {isa::kAluImm, "alu_imm"}}) {
      c.zero(b, f, name, "ALU NOP");
    }
    return;
  }

  // Operand size against the opcode's size class.
  const bool fp = a.size_code == 3;
  const bool ok = [&] {
    switch (info->sizes) {
      case SizeClass::any: return true;
      case SizeClass::int_: return !fp;
      case SizeClass::fp: return fp;
      case SizeClass::num: return true;
      case SizeClass::wide: return a.size_code == 1 || a.size_code == 2;
    }
    return false;
  }();
  if (!ok) {
    static const char* names[] = {"8-bit", "16-bit", "32-bit", "fp32"};
    c.fail("alu_cfg.size", std::string(mn) + " does not take " + names[a.size_code] + " operands");
  }
  const isa::RegFile data = VectorRegFile::file_for_size(a.size_code);

  // Immediate and the V / M bits.
  switch (info->imm) {
    case ImmMode::none_:
      if (a.imm_valid || a.mask_bit) c.fail("alu_cfg", std::string(mn) + " takes no immediate (V and M must be 0)");
      c.zero(b, isa::kAluImm, "alu_imm", std::string(mn) + " takes no immediate");
      break;
    case ImmMode::optional_:
      if (a.mask_bit) c.fail("alu_cfg.mask", std::string(mn) + " is not a logic operation; M must be 0");
      break;
    case ImmMode::mask:
      if (a.mask_bit != a.imm_valid) {
        c.fail("alu_cfg", std::string(mn) + ": a bit-mask immediate sets both M and V");
      }
      break;
    case ImmMode::required:
    case ImmMode::shift:
    case ImmMode::quant:
      if (!a.imm_valid) c.fail("alu_cfg.imm_valid", std::string(mn) + " needs an immediate (V=1)");
      if (a.mask_bit) c.fail("alu_cfg.mask", std::string(mn) + " does not take a bit mask; M must be 0");
      break;
  }
  if (!a.imm_valid) c.zero(b, isa::kAluImm, "alu_imm", "V=0: the immediate is not valid");
  if (info->imm == ImmMode::shift && a.imm >= static_cast<uint32_t>(a.bits())) {
    c.fail("alu_imm", std::string(mn) + " shift count " + std::to_string(a.imm) +
                          " is not below the operand size " + std::to_string(a.bits()));
  }
  if (info->imm == ImmMode::quant && ((a.imm >> 21) & 7u) != 0) {
    c.fail("alu_imm", std::string(mn) + " quantization immediate bits [23:21] must be 0");
  }

  // Register fields by operand form; unused fields must be 0.
  const bool src2_is_imm = a.imm_valid && (info->imm == ImmMode::optional_ || info->imm == ImmMode::mask);
  auto use = [&](int v, isa::RegFile f, const char* field) { c.reg(f, v, field, mn); };
  auto unused = [&](isa::Field f, const char* field) { c.zero(b, f, field, std::string("unused by ") + mn); };
  switch (info->form) {
    case Form::none_:
      break;
    case Form::d:
      use(a.rd, data, "alu_rd"), unused(isa::kAluRs1, "alu_rs1"), unused(isa::kAluRs2, "alu_rs2"),
          unused(isa::kAluRs3, "alu_rs3");
      break;
    case Form::ds:
      use(a.rd, data, "alu_rd"), use(a.rs1, data, "alu_rs1"), unused(isa::kAluRs2, "alu_rs2"),
          unused(isa::kAluRs3, "alu_rs3");
      break;
    case Form::dss:
    case Form::mss:
      use(a.rd, info->form == Form::mss ? isa::RegFile::M : data, "alu_rd");
      use(a.rs1, data, "alu_rs1");
      if (src2_is_imm) unused(isa::kAluRs2, "alu_rs2"); else use(a.rs2, data, "alu_rs2");
      unused(isa::kAluRs3, "alu_rs3");
      break;
    case Form::dsi:
      use(a.rd, data, "alu_rd"), use(a.rs1, data, "alu_rs1"), unused(isa::kAluRs2, "alu_rs2"),
          unused(isa::kAluRs3, "alu_rs3");
      break;
    case Form::di:
      use(a.rd, data, "alu_rd"), unused(isa::kAluRs1, "alu_rs1"), unused(isa::kAluRs2, "alu_rs2"),
          unused(isa::kAluRs3, "alu_rs3");
      break;
    case Form::dsss:
      use(a.rd, data, "alu_rd"), use(a.rs1, data, "alu_rs1"), use(a.rs2, data, "alu_rs2"),
          use(a.rs3, data, "alu_rs3");
      break;
    case Form::dssm:
      use(a.rd, data, "alu_rd"), use(a.rs1, data, "alu_rs1"), use(a.rs2, data, "alu_rs2"),
          use(a.rs3, isa::RegFile::M, "alu_rs3");
      break;
    case Form::bsq:
      use(a.rd, isa::RegFile::RB, "alu_rd"), use(a.rs1, data, "alu_rs1"),
          unused(isa::kAluRs2, "alu_rs2"), unused(isa::kAluRs3, "alu_rs3");
      break;
  }
}

}  // namespace

uint64_t bundle_field(const Bundle& b, int lsb, int width) {
  if (width <= 0 || width > 64 || lsb < 0 || lsb + width > 128) {
    internal_error("bundle_field out of range");
  }
  const unsigned __int128 v = (static_cast<unsigned __int128>(b.hi) << 64) | b.lo;
  const unsigned __int128 m = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return static_cast<uint64_t>((v >> lsb) & m);
}

DecodedBundle decode(const Bundle& b, const std::string& where) {
  const Checker c{where};
  DecodedBundle d;
  if (bundle_field(b, isa::kFormatBit, 1) != 0) {
    d.is_long = true;
    const uint64_t op = bundle_field(b, isa::kLongOp);
    const isa::LongOpInfo* info = kLongByOpcode[op];
    if (info == nullptr) c.fail("long_op", "unknown long-format opcode " + hex(op));
    d.mask_move.mask = static_cast<int>(bundle_field(b, isa::kLongMask));
    c.reg(isa::RegFile::M, d.mask_move.mask, "long_mask", info->mnemonic);
    c.zero(b, isa::kLongPadding, "padding", "long-format padding");
    for (int i = 0; i < 12; ++i) {
      d.mask_move.imm[i] = static_cast<uint8_t>(bundle_field(b, isa::kLongImm.lsb + 8 * i, 8));
    }
    return d;
  }
  c.zero(b, isa::kTriadPadding, "padding", "triad padding");

  const uint64_t lop = bundle_field(b, isa::kLdOp);
  const isa::LoadOpInfo* li = kLoadByOpcode[lop];
  if (li == nullptr) {
    if (kLongByOpcode[lop] != nullptr) {
      c.fail("ld_op", std::string(kLongByOpcode[lop]->mnemonic) +
                          " may not be bundled [0093]: it needs the long format (bit 127 = 1)");
    }
    c.fail("ld_op", "unknown load opcode " + hex(lop));
  }
  d.load = {li->kind, li->mnemonic, li->reg, static_cast<int>(bundle_field(b, isa::kLdReg))};
  if (li->reg == isa::RegFile::none) {
    c.zero(b, isa::kLdReg, "ld_reg", "load NOP");
  } else {
    c.reg(li->reg, d.load.reg, "ld_reg", li->mnemonic);
  }

  decode_alu(b, d.alu, c);

  const uint64_t sop = bundle_field(b, isa::kStOp);
  const isa::StoreOpInfo* si = kStoreByOpcode[sop];
  if (si == nullptr) c.fail("st_op", "unknown store opcode " + hex(sop));
  d.store = {si->kind, si->mnemonic, si->reg, static_cast<int>(bundle_field(b, isa::kStReg))};
  if (si->reg == isa::RegFile::none) {
    c.zero(b, isa::kStReg, "st_reg", "store NOP");
  } else {
    c.reg(si->reg, d.store.reg, "st_reg", si->mnemonic);
  }
  return d;
}

QuantParams quant_params(uint32_t imm) {
  return {static_cast<int16_t>(imm & 0xFFFFu), static_cast<int>((imm >> 16) & 31u),
          static_cast<int8_t>(imm >> 24)};
}

}  // namespace wafersim::tensor
