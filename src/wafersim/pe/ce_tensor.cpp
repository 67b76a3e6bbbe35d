// Tensor instructions of the compute element (docs/tensor.md, "On a processing element"):
// tbias / tdone / tvprog latch settings, tmm / tlayer issue a pass of the attached unit
// over operands that DSDs describe in PE memory, and advance_tensor() lands its results.
//
// Matrix operands are memory DSDs read with the unit's element size (int8: 1 byte; fp16 and
// bf16: 2 bytes; bias and tmm results: 4 bytes): a 1D DSD is one row (Base + k * Stride); a
// 4D DSD with two dimensions is rows x cols, dimension 1 (fastest) the columns, each with
// its Select Stride [0544]-[0550]. Data is P x K, weights K x O (a 1D weight vector is cut
// into rows of K), the tmm destination P x O, the tlayer destination O x P.
#include "wafersim/pe/ce_tensor.hpp"

#include <algorithm>
#include <string>

#include "wafersim/pe/ce_errors.hpp"
#include "wafersim/pe/compute_element.hpp"
#include "wafersim/pe/dsd.hpp"

namespace wafersim::pe {

using fabric::Wavelet;

namespace {

// Element addresses of a memory matrix, row-major.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<uint32_t> addr;
};

struct At {
  const CeCore& core;
  uint32_t pc;
  const char* mnemonic;
  [[noreturn]] void fail(const std::string& what,
                         ErrorCategory cat = ErrorCategory::usage) const {
    program_error(core, pc, mnemonic, what, cat);
  }
};

Matrix matrix_operand(const At& at, const char* what, uint64_t raw, int bytes) {
  const CeCore& core = at.core;
  const int type = dsd_type(raw);
  Matrix m;
  int64_t base = 0, idx = 0, stride[2] = {bytes, 0};
  if (type == 0) {
    at.fail(std::string(what) + ": tensor operands are read from memory, not from the fabric");
  } else if (type == 1) {
    const Mem1D d = unpack_mem1d(raw);
    if (d.ss) {
      at.fail(std::string(what) + ": SS (single step) is not modelled", ErrorCategory::unsupported);
    }
    if (d.ix != 0) at.fail(std::string(what) + ": an indexed 1D vector (IX) is not a matrix");
    base = d.base;
    idx = d.wli ? core.gpr[isa::kIndexGpr] : 0;
    m.rows = 1;
    m.cols = d.length;
    stride[0] = d.stride;
  } else {
    const uint64_t xraw = core.dsr.xdsr(type);
    if (isa::kXdsdType.get(xraw) != 0) {
      at.fail(std::string(what) + ": a circular buffer (XDSR " + std::to_string(type) +
              ") is not a matrix; use a 1D or 4D memory DSD");
    }
    const Mem4D d = unpack_mem4d(raw);
    const X4D x = unpack_x4d(xraw);
    if (d.ss) {
      at.fail(std::string(what) + ": SS (single step) is not modelled", ErrorCategory::unsupported);
    }
    Dims4 dims;
    if (!split_dims(d.length24, x.df, dims) || dims.n > 2) {
      at.fail(std::string(what) + ": XDSR " + std::to_string(type) +
              " describes more than two dimensions; a matrix has rows and columns");
    }
    base = d.base;
    idx = d.wli ? core.gpr[isa::kIndexGpr] : 0;
    m.cols = dims.len[0];
    m.rows = dims.n == 2 ? dims.len[1] : 1;
    const uint8_t sel[2] = {x.sel1, x.sel2};
    for (int i = 0; i < 2; ++i) {
      const int64_t reg =
          sel[i] >= 2 ? sign_extend(core.dsr.stride_reg(sel[i]), isa::kStrideRegisterBits) : 0;
      stride[i] = sel[i] == 0 ? bytes : sel[i] == 1 ? x.stride : reg;
    }
  }
  const int64_t limit = core.cfg.data_bytes();
  m.addr.resize(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      const int64_t a = base + idx + c * stride[0] + r * stride[1];
      if (a < 0 || a + bytes > limit || (bytes > 1 && a % 2)) {
        memory_error(core, at.pc, at.mnemonic,
                     std::string(what) + " element (" + std::to_string(r) + ", " +
                         std::to_string(c) + ") at address " + std::to_string(a) +
                         (a % 2 && bytes > 1
                              ? " is odd: memory is accessed two bytes at a time [0579]"
                              : " is outside data memory [0, " + std::to_string(limit) + ")"));
      }
      m.addr[static_cast<size_t>(r * m.cols + c)] = static_cast<uint32_t>(a);
    }
  }
  return m;
}

std::string shape(int64_t r, int64_t c) { return std::to_string(r) + " x " + std::to_string(c); }

}  // namespace

ComputeElement::~ComputeElement() = default;

tensor::TensorUnit* ComputeElement::tensor_unit() {
  host_change();  // the caller may change the unit
  return tensor_ ? &tensor_->unit : nullptr;
}

bool ComputeElement::tensor_busy() const { return tensor_ && tensor_->busy; }

CeTensor& ComputeElement::tensor_state(const Instruction& in) {
  if (!tensor_) {
    if (!core_.cfg.tensor_unit) {
      program_error(core_, task_.pc, in.mnemonic(),
                    "this PE has no tensor unit (create the wafer with tensor_unit=...)");
    }
    tensor_ = std::make_unique<CeTensor>(core_.cfg.tensor);
  }
  return *tensor_;
}

void ComputeElement::execute_tensor(const Instruction& in) {
  const At at{core_, task_.pc, in.mnemonic()};
  CeTensor& t = tensor_state(in);
  switch (in.op) {
    case isa::Op::tdone: {
      uint32_t v = 0;
      switch (in.op1_type) {
        case 1: {
          const uint32_t a = in.imm8();
          if (a + 2u > core_.cfg.data_bytes() || a % 2) {
            memory_error(core_, at.pc, at.mnemonic,
                         "address " + std::to_string(a) + " is odd or outside data memory");
          }
          v = core_.mem.read16(a);
          break;
        }
        case 2: v = core_.gpr[in.op1]; break;
        case 3: v = in.imm8(); break;
        default: at.fail("the completion id is a value (#imm, register or [addr]), not a vector");
      }
      if (v == 255 || v == 0xFFFF) t.done_id = -1;
      else if (v < 64) t.done_id = static_cast<int>(v);
      else at.fail("completion id " + std::to_string(v) + " names no id (0..63, or 255 for none)");
      break;
    }
    case isa::Op::tbias: {
      if (in.op1_type != 0) at.fail("the bias is a descriptor S1[n]");
      const Matrix b = matrix_operand(at, "src1 (bias)", core_.dsr.s1[in.op1], 4);
      t.bias.resize(b.addr.size());
      for (size_t i = 0; i < b.addr.size(); ++i) {
        t.bias[i] = static_cast<int32_t>(core_.mem.read_le(b.addr[i], 4));
      }
      t.has_bias = true;
      break;
    }
    case isa::Op::tvprog: {
      if (in.op1_type != 0) at.fail("the vector program is a descriptor S1[n]");
      const uint64_t raw = core_.dsr.s1[in.op1];
      if (dsd_type(raw) != 1) at.fail("src1 (program): a 1D memory DSD over the bundles");
      const Mem1D d = unpack_mem1d(raw);
      if (d.ix != 0) at.fail("src1 (program): an indexed 1D vector (IX) is not a bundle list");
      if (d.stride != 16) {
        at.fail("src1 (program): Stride must be 16 (bytes per 128-bit bundle), got " +
                std::to_string(d.stride));
      }
      if (d.length == 0 || uint64_t{d.base} + uint64_t{d.length} * 16 > core_.cfg.data_bytes() ||
          d.base % 2) {
        memory_error(core_, at.pc, at.mnemonic,
                     "src1 (program): " + std::to_string(d.length) + " bundles at address " +
                         std::to_string(d.base) + " are empty or leave data memory");
      }
      std::vector<tensor::Bundle> bundles(d.length);
      for (uint32_t i = 0; i < d.length; ++i) {
        bundles[i] = {core_.mem.read_le(d.base + 16 * i, 8),
                      core_.mem.read_le(d.base + 16 * i + 8, 8)};
      }
      try {
        t.unit.load_vector_program(bundles);  // names the bundle and field
      } catch (const ProgramError& e) {
        at.fail(e.what());
      }
      t.program_loaded = true;
      break;
    }
    case isa::Op::tmm:
    case isa::Op::tlayer: issue_pass(in, t); break;
    default: internal_error("execute_tensor: not a tensor instruction");
  }
  advance(task_.pc + 1, in.term);
}

void ComputeElement::issue_pass(const Instruction& in, CeTensor& t) {
  const At at{core_, task_.pc, in.mnemonic()};
  const bool layer = in.op == isa::Op::tlayer;
  if (in.op0_type != 1 || in.op1_type != 0) {
    at.fail("operands are D[n], S0[n], S1[m]: destination, data and weight descriptors");
  }
  const tensor::MatrixArrayConfig& acfg = t.unit.config().array;
  const bool int8 = acfg.dtype == tensor::MatrixDtype::int8;
  const int eb = int8 ? 1 : 2;
  const Matrix data = matrix_operand(at, "src0 (data)", core_.dsr.s0[in.op0], eb);
  Matrix w = matrix_operand(at, "src1 (weights)", core_.dsr.s1[in.op1], eb);
  const int64_t P = data.rows, K = data.cols;
  if (w.rows == 1 && K > 1) {  // a 1D weight vector: rows of K
    if (w.cols % K) {
      at.fail("src1 (weights): a 1D vector of " + std::to_string(w.cols) +
              " elements is not K x O for K = " + std::to_string(K) + " (src0's columns)");
    }
    w.rows = K;
    w.cols /= K;
  }
  if (w.rows != K) {
    at.fail("src1 (weights) is " + shape(w.rows, w.cols) + " but src0 (data) is " +
            shape(P, K) + ": the weights need K = " + std::to_string(K) + " rows");
  }
  const int64_t O = w.cols;
  if (P < 1 || K < 1 || O < 1) {
    at.fail("empty operands: data " + shape(P, K) + ", weights " + shape(K, O));
  }
  if (t.has_bias && !int8) {
    at.fail(std::string("a bias (tbias) is modelled for int8 passes only, not ") +
                tensor::dtype_name(acfg.dtype),
            ErrorCategory::unsupported);
  }
  if (t.has_bias && static_cast<int64_t>(t.bias.size()) != O) {
    at.fail("the bias (tbias) has " + std::to_string(t.bias.size()) + " values; the pass has O = " +
            std::to_string(O) + " output channels");
  }
  // Where the results go.
  TensorPass pass;
  pass.mnemonic = in.mnemonic();
  pass.pc = task_.pc;
  const int64_t n = P * O;
  const uint64_t draw = core_.dsr.d[in.op0];
  if (dsd_type(draw) == 0) {
    const FabricOut f = unpack_fabric_out(draw);
    if (f.ss) at.fail("dst: SS (single step) is not modelled", ErrorCategory::unsupported);
    if (simd_width(f.sw_code) != 1) {
      at.fail("dst: a tensor result goes one per wavelet: SW must be 1 (code 0), got code " +
              std::to_string(f.sw_code));
    }
    if (static_cast<int64_t>(f.length) != n) {
      at.fail("dst: Length " + std::to_string(f.length) + " wavelets, but the pass sends " +
              std::to_string(n) + " results (" + (layer ? shape(O, P) : shape(P, O)) + ")");
    }
    pass.fabric = true;
    pass.color = f.color;
    pass.index = f.wli ? core_.gpr[isa::kIndexGpr] : f.index6;
    pass.ctrl = f.c || ((pass.index & 0xFFC0u) == 0xFFC0u);
  } else {
    const Matrix dm = matrix_operand(at, "dst", draw, layer ? 1 : 4);
    const int64_t want_r = layer ? O : P, want_c = layer ? P : O;
    const bool ok = dm.rows == 1 ? dm.cols == n : (dm.rows == want_r && dm.cols == want_c);
    if (!ok) {
      at.fail("dst describes " + shape(dm.rows, dm.cols) + " elements; the pass writes " +
              shape(want_r, want_c) +
              (layer ? " bytes (channels x positions)" : " 32-bit results"));
    }
    pass.addr = dm.addr;
    pass.bytes = layer ? 1 : 4;
  }
  // Operands, read at issue.
  tensor::MatmulOperands ops;
  ops.positions = P;
  ops.depth = K;
  ops.channels = O;
  std::vector<uint8_t> d8, w8;
  std::vector<uint16_t> d16, w16;
  if (int8) {
    d8.resize(data.addr.size());
    w8.resize(w.addr.size());
    for (size_t i = 0; i < d8.size(); ++i) {
      d8[i] = static_cast<uint8_t>(core_.mem.read_le(data.addr[i], 1));
    }
    for (size_t i = 0; i < w8.size(); ++i) {
      w8[i] = static_cast<uint8_t>(core_.mem.read_le(w.addr[i], 1));
    }
    ops.data8 = d8;
    ops.weights8 = w8;
    if (t.has_bias) ops.bias = t.bias;
  } else {
    d16.resize(data.addr.size());
    w16.resize(w.addr.size());
    for (size_t i = 0; i < d16.size(); ++i) d16[i] = core_.mem.read16(data.addr[i]);
    for (size_t i = 0; i < w16.size(); ++i) w16[i] = core_.mem.read16(w.addr[i]);
    ops.data16 = d16;
    ops.weights16 = w16;
  }
  tensor::TensorCounters c;
  pass.values.resize(static_cast<size_t>(n));
  try {
    if (layer) {
      if (!t.program_loaded) at.fail("no vector program: load one with tvprog first");
      std::vector<uint8_t> bytes(static_cast<size_t>(n));
      c = t.unit.run_layer(ops, tensor::PoolConfig{1, 1, P, 1}, bytes);
      std::copy(bytes.begin(), bytes.end(), pass.values.begin());
    } else {
      c = t.unit.run_matmul(ops, pass.values);
    }
  } catch (const ConfigError& e) {  // the unit's checks of operands and program
    at.fail(e.what());
  }
  pass.done_at = core_.cycle + static_cast<uint64_t>(std::max<int64_t>(c.cycles, 1));
  pass.done_id = t.done_id;
  t.pass = std::move(pass);
  t.busy = true;
  t.has_bias = false;
  t.bias.clear();
  CeLiveStats& s = core_.stats();
  ++s.tensor_passes;
  s.tensor_cycles += static_cast<uint64_t>(c.cycles);
  s.tensor_macs += static_cast<uint64_t>(c.macs);
}

void ComputeElement::advance_tensor() {
  if (!tensor_busy()) return;
  TensorPass& p = tensor_->pass;
  if (core_.cycle < p.done_at) {
    ++core_.progress;  // the unit is computing
    return;
  }
  if (!p.fabric) {
    for (size_t i = 0; i < p.values.size(); ++i) {
      core_.mem.write_le(p.addr[i], p.bytes, p.values[i]);
    }
  } else if (p.sent < p.values.size()) {
    // One wavelet per cycle, while the destination queue has room (like a fabric output).
    const bool local = core_.is_local(p.color);
    if (local ? core_.inq.full(p.color) : core_.outq.full(p.color)) return;
    Wavelet w;
    w.data = p.values[p.sent];
    w.index = p.index;
    w.color = static_cast<uint8_t>(p.color);
    w.ctrl = p.ctrl;
    if (local) core_.deliver_local(w);
    else core_.outq.push(p.color, w);
    ++p.sent;
    ++core_.progress;
    if (p.sent < p.values.size()) return;
  }
  tensor_->busy = false;
  if (p.done_id >= 0) core_.activate_id(p.done_id, IdCause::tensor);  // like an AC on completion [0503]
  ++core_.progress;
}

std::string ComputeElement::describe_tensor() const {
  if (!tensor_busy()) return "";
  const TensorPass& p = tensor_->pass;
  std::string s =
      std::string("tensor unit: ") + p.mnemonic + " issued at pc " + std::to_string(p.pc);
  if (core_.cycle < p.done_at) return s + ", computing until cycle " + std::to_string(p.done_at);
  return s + ", sending results on color " + std::to_string(p.color) + " (" +
         std::to_string(p.sent) + " of " + std::to_string(p.values.size()) +
         " sent; the output queue is full)";
}

}  // namespace wafersim::pe
