// GENERATED from python/wafersim/asm/vector_isa.json by
// `python -m wafersim.asm.vector_isa_gen`. Do not edit: edit the JSON and regenerate.
#pragma once

#include <array>
#include <cstdint>

namespace wafersim::tensor::isa {

struct Field {
  int lsb;
  int width;
};

inline constexpr int kBundleBits = 128;
inline constexpr int kFormatBit = 127;
inline constexpr Field kLdOp{0, 8};  // load opcode 741 [0089]
inline constexpr Field kLdReg{8, 5};  // load destination register 743 [0089]
inline constexpr Field kAluOp{13, 8};  // ALU opcode 751 [0088]
inline constexpr Field kAluRd{21, 5};  // ALU destination register (753) [0091]
inline constexpr Field kAluRs1{26, 5};  // ALU source register 1 (753) [0091]
inline constexpr Field kAluRs2{31, 5};  // ALU source register 2 (753) [0091]
inline constexpr Field kAluRs3{36, 5};  // ALU source register 3 (753) [0091]
inline constexpr Field kAluCfg{41, 5};  // ALU opcode configuration 755 [0092]
inline constexpr Field kAluImm{46, 32};  // ALU immediate 757 [0092]
inline constexpr Field kStOp{78, 8};  // store opcode 761 [0090]
inline constexpr Field kStReg{86, 5};  // store source register 763 [0090]
inline constexpr Field kLongOp{0, 8};  // long-format opcode [0093]
inline constexpr Field kLongMask{8, 5};  // destination mask register [0093]
inline constexpr Field kLongImm{13, 96};  // 96-bit immediate, bit i = lane i [0093]
inline constexpr Field kTriadPadding{91, 36};
inline constexpr Field kLongPadding{109, 18};
inline constexpr Field kCfgSize{0, 2};
inline constexpr Field kCfgMask{2, 1};
inline constexpr Field kCfgImmValid{3, 1};
inline constexpr Field kCfgPredicate{4, 1};

enum class RegFile : uint8_t { none, RB, RW, RD, M };
struct RegFileCount {
  RegFile file;
  int count;
};
inline constexpr std::array<RegFileCount, 4> kRegFileCounts{{{RegFile::RB, 32}, {RegFile::RW, 16}, {RegFile::RD, 8}, {RegFile::M, 4}}};
enum class LoadKind : uint8_t { nop, deq, deqm, ld, ldm, ldmsk };
enum class AluKind : uint8_t { nop, add_s, add_u, sub_s, sub_u, mul, fadd, fsub, fmul, abs, and_, or_, xor_, not_, shl, shr_u, shr_s, mov, movi, movc, cmpeq, cmpne, cmplt_s, cmplt_u, cmple_s, cmple_u, sel, mad, relu, sigm, qnt_s8, qnt_u8, reluq_s8, reluq_u8 };
enum class StoreKind : uint8_t { nop, st, out };
enum class LongKind : uint8_t { maskmov };
enum class Form : uint8_t { none_, d, ds, dss, dsi, di, dsss, dssm, mss, bsq };
enum class SizeClass : uint8_t { any, int_, fp, num, wide };
enum class ImmMode : uint8_t { none_, optional_, mask, required, shift, quant };

struct LoadOpInfo {
  uint8_t opcode;
  const char* mnemonic;
  LoadKind kind;
  RegFile reg;
};
struct AluOpInfo {
  uint8_t opcode;
  const char* mnemonic;
  AluKind kind;
  Form form;
  SizeClass sizes;
  ImmMode imm;
};
struct StoreOpInfo {
  uint8_t opcode;
  const char* mnemonic;
  StoreKind kind;
  RegFile reg;
};
struct LongOpInfo {
  uint8_t opcode;
  const char* mnemonic;
  LongKind kind;
};

inline constexpr std::array<LoadOpInfo, 14> kLoadOps{{
    {0, "NOP", LoadKind::nop, RegFile::none},
    {1, "DEQ.B", LoadKind::deq, RegFile::RB},
    {2, "DEQ.H", LoadKind::deq, RegFile::RW},
    {3, "DEQ.W", LoadKind::deq, RegFile::RD},
    {5, "DEQM.B", LoadKind::deqm, RegFile::RB},
    {6, "DEQM.H", LoadKind::deqm, RegFile::RW},
    {7, "DEQM.W", LoadKind::deqm, RegFile::RD},
    {9, "LD.B", LoadKind::ld, RegFile::RB},
    {10, "LD.H", LoadKind::ld, RegFile::RW},
    {11, "LD.W", LoadKind::ld, RegFile::RD},
    {13, "LDM.B", LoadKind::ldm, RegFile::RB},
    {14, "LDM.H", LoadKind::ldm, RegFile::RW},
    {15, "LDM.W", LoadKind::ldm, RegFile::RD},
    {16, "LDMSK", LoadKind::ldmsk, RegFile::M},
}};
inline constexpr std::array<AluOpInfo, 35> kAluOps{{
    {0, "NOP", AluKind::nop, Form::none_, SizeClass::any, ImmMode::none_},
    {1, "ADD.S", AluKind::add_s, Form::dss, SizeClass::int_, ImmMode::optional_},
    {2, "ADD.U", AluKind::add_u, Form::dss, SizeClass::int_, ImmMode::optional_},
    {3, "SUB.S", AluKind::sub_s, Form::dss, SizeClass::int_, ImmMode::optional_},
    {4, "SUB.U", AluKind::sub_u, Form::dss, SizeClass::int_, ImmMode::optional_},
    {5, "MUL.S", AluKind::mul, Form::dss, SizeClass::int_, ImmMode::optional_},
    {6, "MUL.U", AluKind::mul, Form::dss, SizeClass::int_, ImmMode::optional_},
    {8, "FADD", AluKind::fadd, Form::dss, SizeClass::fp, ImmMode::optional_},
    {9, "FSUB", AluKind::fsub, Form::dss, SizeClass::fp, ImmMode::optional_},
    {10, "FMUL", AluKind::fmul, Form::dss, SizeClass::fp, ImmMode::optional_},
    {16, "ABS", AluKind::abs, Form::ds, SizeClass::num, ImmMode::none_},
    {17, "AND", AluKind::and_, Form::dss, SizeClass::any, ImmMode::mask},
    {18, "OR", AluKind::or_, Form::dss, SizeClass::any, ImmMode::mask},
    {19, "XOR", AluKind::xor_, Form::dss, SizeClass::any, ImmMode::mask},
    {20, "NOT", AluKind::not_, Form::ds, SizeClass::any, ImmMode::none_},
    {24, "SHL", AluKind::shl, Form::dsi, SizeClass::int_, ImmMode::shift},
    {25, "SHR.U", AluKind::shr_u, Form::dsi, SizeClass::int_, ImmMode::shift},
    {26, "SHR.S", AluKind::shr_s, Form::dsi, SizeClass::int_, ImmMode::shift},
    {32, "MOV", AluKind::mov, Form::ds, SizeClass::any, ImmMode::none_},
    {33, "MOVI", AluKind::movi, Form::di, SizeClass::any, ImmMode::required},
    {34, "MOVC", AluKind::movc, Form::d, SizeClass::int_, ImmMode::none_},
    {40, "CMPEQ", AluKind::cmpeq, Form::mss, SizeClass::num, ImmMode::optional_},
    {41, "CMPNE", AluKind::cmpne, Form::mss, SizeClass::num, ImmMode::optional_},
    {42, "CMPLT.S", AluKind::cmplt_s, Form::mss, SizeClass::num, ImmMode::optional_},
    {43, "CMPLT.U", AluKind::cmplt_u, Form::mss, SizeClass::int_, ImmMode::optional_},
    {44, "CMPLE.S", AluKind::cmple_s, Form::mss, SizeClass::num, ImmMode::optional_},
    {45, "CMPLE.U", AluKind::cmple_u, Form::mss, SizeClass::int_, ImmMode::optional_},
    {48, "SEL", AluKind::sel, Form::dssm, SizeClass::any, ImmMode::none_},
    {49, "MAD", AluKind::mad, Form::dsss, SizeClass::num, ImmMode::none_},
    {56, "RELU", AluKind::relu, Form::ds, SizeClass::num, ImmMode::none_},
    {57, "SIGM", AluKind::sigm, Form::ds, SizeClass::fp, ImmMode::none_},
    {64, "QNT.S8", AluKind::qnt_s8, Form::bsq, SizeClass::wide, ImmMode::quant},
    {65, "QNT.U8", AluKind::qnt_u8, Form::bsq, SizeClass::wide, ImmMode::quant},
    {66, "RELUQ.S8", AluKind::reluq_s8, Form::bsq, SizeClass::wide, ImmMode::quant},
    {67, "RELUQ.U8", AluKind::reluq_u8, Form::bsq, SizeClass::wide, ImmMode::quant},
}};
inline constexpr std::array<StoreOpInfo, 5> kStoreOps{{
    {0, "NOP", StoreKind::nop, RegFile::none},
    {1, "ST.B", StoreKind::st, RegFile::RB},
    {2, "ST.H", StoreKind::st, RegFile::RW},
    {3, "ST.W", StoreKind::st, RegFile::RD},
    {8, "OUT.B", StoreKind::out, RegFile::RB},
}};
inline constexpr std::array<LongOpInfo, 1> kLongOps{{
    {1, "MASKMOV", LongKind::maskmov},
}};

}  // namespace wafersim::tensor::isa
