// The tensor unit of seed 002: vector-engine bundles, the engine, the matrix array, the
// post-processor and the tensor unit. Arrays arrive C-contiguous with the exact dtype (the
// wafersim.tensor wrappers prepare them); results are returned as new numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/tensor/matrix_array.hpp"
#include "wafersim/tensor/matrix_pass.hpp"
#include "wafersim/tensor/post_processor.hpp"
#include "wafersim/tensor/tensor_unit.hpp"
#include "wafersim/tensor/vector_engine.hpp"
#include "wafersim/tensor/vector_isa.hpp"

namespace wafersim::bindings {

using namespace wafersim::tensor;

namespace {

isa::RegFile file_named(const std::string& name) {
  if (name == "RB") return isa::RegFile::RB;
  if (name == "RW") return isa::RegFile::RW;
  if (name == "RD") return isa::RegFile::RD;
  throw ConfigError("register file must be 'RB', 'RW' or 'RD', got '" + name + "'");
}

std::vector<Bundle> bundles_of(const CArray<uint64_t>& words) {
  if (words.ndim() != 2 || words.shape(1) != 2) {
    throw ProgramError("a vector program is an (n, 2) uint64 array of [low, high] words");
  }
  std::vector<Bundle> out(static_cast<size_t>(words.shape(0)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = {words.data()[2 * i], words.data()[2 * i + 1]};
  return out;
}

PipelineMode pipeline_named(const std::string& s) {
  if (s == "stagger") return PipelineMode::stagger;
  if (s == "parallel") return PipelineMode::parallel;
  throw ConfigError("pipeline must be 'stagger' or 'parallel', got '" + s + "'");
}

ExecMode exec_named(const std::string& s) {
  if (s == "fast") return ExecMode::fast;
  if (s == "cycle") return ExecMode::cycle;
  throw ConfigError("mode must be 'fast' or 'cycle', got '" + s + "'");
}

MatrixDtype dtype_named(const std::string& s) {
  if (s == "int8") return MatrixDtype::int8;
  if (s == "fp16") return MatrixDtype::fp16;
  if (s == "bf16") return MatrixDtype::bf16;
  throw ConfigError("dtype must be 'int8', 'fp16' or 'bf16', got '" + s + "'");
}

py::dict decoded_dict(const DecodedBundle& d) {
  py::dict r;
  r["is_long"] = d.is_long;
  if (d.is_long) {
    r["mask"] = d.mask_move.mask;
    r["imm96"] = py::bytes(reinterpret_cast<const char*>(d.mask_move.imm.data()), 12);
    return r;
  }
  r["load"] = py::make_tuple(d.load.mnemonic, file_name(d.load.file), d.load.reg);
  const AluSlot& a = d.alu;
  py::dict alu;
  alu["mnemonic"] = a.info != nullptr ? a.info->mnemonic : "NOP";
  alu["rd"] = a.rd, alu["rs1"] = a.rs1, alu["rs2"] = a.rs2, alu["rs3"] = a.rs3;
  alu["size"] = a.size_code, alu["mask"] = a.mask_bit, alu["imm_valid"] = a.imm_valid;
  alu["predicate"] = a.predicate, alu["imm"] = a.imm;
  r["alu"] = alu;
  r["store"] = py::make_tuple(d.store.mnemonic, file_name(d.store.file), d.store.reg);
  return r;
}

py::dict counters_dict(const TensorCounters& c) {
  py::dict d;
  d["cycles"] = c.cycles, d["array_cycles"] = c.array_cycles, d["macs"] = c.macs;
  d["peak_macs"] = c.peak_macs, d["utilization"] = c.utilization(), d["tiles"] = c.tiles;
  d["rows_drained"] = c.rows_drained, d["bundles"] = c.bundles;
  d["ppu_write_cycles"] = c.ppu_write_cycles;
  py::dict stalls;
  stalls["array_drain_busy"] = c.stall_array_drain_busy;
  stalls["array_queue_full"] = c.stall_array_queue_full;
  stalls["engine_dequeue"] = c.stall_engine_dequeue;
  stalls["engine_sram_port"] = c.stall_engine_sram_port;
  d["stalls"] = stalls;
  return d;
}

// Operand views for a pass; the arrays must outlive the call (they are the caller's).
MatmulOperands operands(const MatrixArray& array, const py::array& data, const py::array& weights,
                        const std::optional<CArray<int32_t>>& bias) {
  if (data.ndim() != 2 || weights.ndim() != 2) {
    throw ConfigError("data must be (positions, depth) and weights (depth, channels) matrices");
  }
  MatmulOperands ops;
  ops.positions = data.shape(0);
  ops.depth = data.shape(1);
  ops.channels = weights.shape(1);
  if (weights.shape(0) != ops.depth) {
    throw ConfigError("weights have depth " + std::to_string(weights.shape(0)) +
                      " but data has depth " + std::to_string(ops.depth));
  }
  const size_t nd = static_cast<size_t>(data.size()), nw = static_cast<size_t>(weights.size());
  if (array.config().dtype == MatrixDtype::int8) {
    ops.data8 = {static_cast<const uint8_t*>(data.data()), nd};
    ops.weights8 = {static_cast<const uint8_t*>(weights.data()), nw};
  } else {
    ops.data16 = {static_cast<const uint16_t*>(data.data()), nd};
    ops.weights16 = {static_cast<const uint16_t*>(weights.data()), nw};
  }
  if (bias) ops.bias = view(*bias);
  return ops;
}

void check_operand_dtype(const MatrixArray& array, const py::array& a, const char* name) {
  const bool is_int = array.config().dtype == MatrixDtype::int8;
  const bool ok = is_int ? (a.dtype().itemsize() == 1) : (a.dtype().itemsize() == 2);
  if (!ok || !(a.flags() & py::array::c_style)) {
    throw ConfigError(std::string(name) + " must be a C-contiguous array of " +
                      (is_int ? "1-byte" : "2-byte") + " elements");
  }
}

}  // namespace

TensorUnitConfig tensor_unit_config(int rows, int cols, int lanes, const std::string& dtype,
                                    bool weight_signed, bool data_signed, int input_queue_rows,
                                    int sram_bytes, const std::string& pipeline,
                                    const std::string& mode) {
  TensorUnitConfig c;
  c.array = {rows, cols, lanes, dtype_named(dtype), weight_signed, data_signed};
  c.input_queue_rows = input_queue_rows;
  c.sram_bytes = sram_bytes;
  c.pipeline = pipeline_named(pipeline);
  c.exec = exec_named(mode);
  return c;
}


void bind_tensor(py::module_& root) {
  py::module_ m = root.def_submodule("tensor", "seed-002 tensor unit: matrix array, vector engine");

  m.def(
      "decode_bundle",
      [](uint64_t lo, uint64_t hi) { return decoded_dict(decode({lo, hi})); }, py::arg("lo"),
      py::arg("hi"));

  py::class_<VectorEngine>(m, "VectorEngine")
      .def(py::init([](int lanes, int sram_bytes, const std::string& pipeline) {
             return VectorEngine({lanes, sram_bytes, pipeline_named(pipeline)});
           }),
           py::arg("lanes"), py::arg("sram_bytes"), py::arg("pipeline"))
      .def_property_readonly("lanes", &VectorEngine::lanes)
      .def("read_reg",
           [](const VectorEngine& ve, const std::string& file, int index) {
             const isa::RegFile f = file_named(file);
             VectorRegFile::check(f, index, "register");
             CArray<uint32_t> out(ve.lanes());
             for (int l = 0; l < ve.lanes(); ++l) out.mutable_data()[l] = ve.state().regs.read(f, index, l);
             return out;
           })
      .def("write_reg",
           [](VectorEngine& ve, const std::string& file, int index, const CArray<uint32_t>& v) {
             const isa::RegFile f = file_named(file);
             VectorRegFile::check(f, index, "register");
             if (v.size() != ve.lanes()) throw ConfigError("register value needs one entry per lane");
             for (int l = 0; l < ve.lanes(); ++l) ve.state().regs.write(f, index, l, v.data()[l]);
           },
           py::arg("file"), py::arg("index"), py::arg("values").noconvert())
      .def("read_mask",
           [](const VectorEngine& ve, int i) {
             VectorRegFile::check(isa::RegFile::M, i, "mask");
             return to_numpy<uint8_t>(ve.state().masks[i]);
           })
      .def("write_mask",
           [](VectorEngine& ve, int i, const CArray<uint8_t>& v) {
             VectorRegFile::check(isa::RegFile::M, i, "mask");
             if (v.size() != ve.lanes()) throw ConfigError("mask value needs one entry per lane");
             for (int l = 0; l < ve.lanes(); ++l) ve.state().masks[i][l] = v.data()[l] != 0;
           },
           py::arg("index"), py::arg("bits").noconvert())
      .def_property_readonly("carry", [](const VectorEngine& ve) { return to_numpy<uint8_t>(ve.state().carry); })
      .def_property_readonly("fp_status",
                             [](const VectorEngine& ve) {
                               const FpStatus& s = ve.state().fp;
                               py::dict d;
                               d["invalid"] = s.invalid, d["overflow"] = s.overflow;
                               d["underflow"] = s.underflow, d["inexact"] = s.inexact;
                               return d;
                             })
      .def("clear_fp_status", [](VectorEngine& ve) { ve.state().fp = {}; })
      .def("push_row",
           [](VectorEngine& ve, const CArray<uint32_t>& row, int64_t arrival) { ve.push_row(view(row), arrival); },
           py::arg("row").noconvert(), py::arg("arrival") = -1)
      .def_property_readonly("queued_rows", &VectorEngine::queued_rows)
      .def("load_program", [](VectorEngine& ve, const CArray<uint64_t>& w) { ve.load_program(bundles_of(w)); },
           py::arg("words").noconvert())
      .def("run", [](VectorEngine& ve) {
             py::gil_scoped_release release;
             return ve.run_loaded();
           })
      .def_property_readonly("pc", &VectorEngine::pc)
      .def_property_readonly("program_size", &VectorEngine::program_size)
      .def("restart_program", &VectorEngine::restart_program)
      .def("execute", [](VectorEngine& ve, uint64_t lo, uint64_t hi) { ve.execute(decode({lo, hi})); })
      .def("pop_output",
           [](VectorEngine& ve) {
             py::list rows;
             for (const OutputRow& r : ve.output()) {
               rows.append(py::make_tuple(to_numpy<uint8_t>(r.bytes), r.cycle));
             }
             ve.output().clear();
             return rows;
           })
      .def("read_sram",
           [](const VectorEngine& ve, int64_t addr, int64_t n) {
             const auto s = ve.sram();
             if (addr < 0 || n < 0 || addr + n > static_cast<int64_t>(s.size())) {
               throw MemoryAccessError("SRAM read of " + std::to_string(n) + " bytes at " +
                                       std::to_string(addr) + " leaves the " + std::to_string(s.size()) +
                                       "-byte vector-engine SRAM");
             }
             return to_numpy<uint8_t>(s.subspan(static_cast<size_t>(addr), static_cast<size_t>(n)));
           })
      .def("write_sram",
           [](VectorEngine& ve, int64_t addr, const CArray<uint8_t>& v) {
             auto s = ve.sram();
             if (addr < 0 || addr + v.size() > static_cast<int64_t>(s.size())) {
               throw MemoryAccessError("SRAM write of " + std::to_string(v.size()) + " bytes at " +
                                       std::to_string(addr) + " leaves the " + std::to_string(s.size()) +
                                       "-byte vector-engine SRAM");
             }
             std::copy(v.data(), v.data() + v.size(), s.begin() + addr);
           },
           py::arg("addr"), py::arg("data").noconvert())
      .def_property("read_pointer", &VectorEngine::read_pointer, &VectorEngine::set_read_pointer)
      .def_property("write_pointer", &VectorEngine::write_pointer, &VectorEngine::set_write_pointer)
      .def_property_readonly("counters",
                             [](const VectorEngine& ve) {
                               const VectorCounters& c = ve.counters();
                               py::dict d;
                               d["cycles"] = c.cycles(), d["bundles"] = c.bundles;
                               d["rows_dequeued"] = c.rows_dequeued, d["rows_out"] = c.rows_out;
                               d["stall_dequeue"] = c.stall_dequeue;
                               d["stall_sram_port"] = c.stall_sram_port;
                               d["last_retire"] = c.last_retire;
                               return d;
                             })
      .def_property_readonly("next_issue", &VectorEngine::next_issue)
      .def("reset", &VectorEngine::reset)
      .def("reset_timing", &VectorEngine::reset_timing);

  py::class_<MatrixArray>(m, "MatrixArray")
      .def(py::init([](int rows, int cols, int lanes, const std::string& dtype, bool ws, bool ds) {
             return MatrixArray({rows, cols, lanes, dtype_named(dtype), ws, ds});
           }),
           py::arg("rows"), py::arg("cols"), py::arg("lanes"), py::arg("dtype"),
           py::arg("weight_signed"), py::arg("data_signed"))
      .def_property_readonly("rows", &MatrixArray::rows)
      .def_property_readonly("cols", &MatrixArray::cols)
      .def_property_readonly("cycle", &MatrixArray::cycle)
      .def("step",
           [](MatrixArray& a, const CArray<uint32_t>& data, const CArray<uint32_t>& weights,
              bool enable, bool clear, bool capture, bool shift) -> py::object {
             if (enable) {
               for (py::ssize_t i = 0; i < data.size(); ++i) a.check_operand(data.data()[i], "data[" + std::to_string(i) + "]");
               for (py::ssize_t j = 0; j < weights.size(); ++j) a.check_operand(weights.data()[j], "weights[" + std::to_string(j) + "]");
             }
             auto out = a.step(view(data), view(weights), {enable, clear, capture, shift});
             if (!out) return py::none();
             return to_numpy<uint32_t>(*out);
           },
           py::arg("data").noconvert(), py::arg("weights").noconvert(), py::arg("enable"),
           py::arg("clear"), py::arg("capture"), py::arg("shift"))
      .def("accumulators",
           [](const MatrixArray& a) {
             CArray<uint32_t> out({a.rows(), a.cols()});
             for (int j = 0; j < a.rows(); ++j)
               for (int i = 0; i < a.cols(); ++i) out.mutable_data()[j * a.cols() + i] = a.accumulator(j, i);
             return out;
           })
      .def("shadows",
           [](const MatrixArray& a) {
             CArray<uint32_t> out({a.rows(), a.cols()});
             for (int j = 0; j < a.rows(); ++j)
               for (int i = 0; i < a.cols(); ++i) out.mutable_data()[j * a.cols() + i] = a.shadow(j, i);
             return out;
           })
      .def("fifo_step",
           [](MatrixArray& a, const std::optional<CArray<uint32_t>>& row) -> py::object {
             std::optional<std::vector<uint32_t>> out;
             if (row) {
               std::vector<uint32_t> in(row->data(), row->data() + row->size());
               out = a.fifo_step(&in);
             } else {
               out = a.fifo_step(nullptr);
             }
             if (!out) return py::none();
             return to_numpy<uint32_t>(*out);
           },
           py::arg("row").noconvert() = py::none())
      .def("matmul",
           [](MatrixArray& a, const py::array& data, const py::array& weights,
              const std::optional<CArray<int32_t>>& bias, const std::string& mode) {
             check_operand_dtype(a, data, "data");
             check_operand_dtype(a, weights, "weights");
             const MatmulOperands ops = operands(a, data, weights, bias);
             const ExecMode em = exec_named(mode);
             MatrixSink sink(ops.positions, ops.channels);
             ArrayPassStats st;
             {
               py::gil_scoped_release release;
               st = run_matmul_pass(a, ops, sink, em);
             }
             CArray<uint32_t> out({static_cast<py::ssize_t>(ops.positions), static_cast<py::ssize_t>(ops.channels)});
             std::copy(sink.result().begin(), sink.result().end(), out.mutable_data());
             py::dict d;
             d["cycles"] = st.cycles, d["tiles"] = st.tiles, d["mac_cycles"] = st.mac_cycles;
             d["macs"] = st.macs, d["bias_cycles"] = st.bias_cycles, d["rows_drained"] = st.entries;
             d["stall_drain_busy"] = st.stall_drain_busy;
             d["utilization"] = st.cycles > 0 ? static_cast<double>(st.macs) /
                 (static_cast<double>(st.cycles) * a.rows() * a.cols()) : 0.0;
             return py::make_tuple(out, d);
           },
           py::arg("data"), py::arg("weights"), py::arg("bias"), py::arg("mode"))
      .def("reset", &MatrixArray::reset);

  py::class_<TensorUnit>(m, "TensorUnit")
      .def(py::init([](int rows, int cols, int lanes, const std::string& dtype, bool ws, bool ds,
                       int queue_rows, int sram_bytes, const std::string& pipeline, const std::string& mode) {
             return std::make_unique<TensorUnit>(tensor_unit_config(
                 rows, cols, lanes, dtype, ws, ds, queue_rows, sram_bytes, pipeline, mode));
           }),
           py::arg("rows"), py::arg("cols"), py::arg("lanes"), py::arg("dtype"), py::arg("weight_signed"),
           py::arg("data_signed"), py::arg("input_queue_rows"), py::arg("sram_bytes"),
           py::arg("pipeline"), py::arg("mode"))
      .def("set_mode", [](TensorUnit& t, const std::string& mode) { t.set_exec_mode(exec_named(mode)); })
      .def("load_vector_program", [](TensorUnit& t, const CArray<uint64_t>& w) { t.load_vector_program(bundles_of(w)); },
           py::arg("words").noconvert())
      .def("run_layer",
           [](TensorUnit& t, const py::array& data, const py::array& weights,
              const std::optional<CArray<int32_t>>& bias, int kernel, int stride, int64_t height, int64_t width) {
             check_operand_dtype(t.array(), data, "data");
             check_operand_dtype(t.array(), weights, "weights");
             const MatmulOperands ops = operands(t.array(), data, weights, bias);
             PoolConfig pool{kernel, stride, height, width};
             validate(pool, ops.positions);
             CArray<uint8_t> out({static_cast<py::ssize_t>(ops.channels), static_cast<py::ssize_t>(pool.pooled_height()),
                                  static_cast<py::ssize_t>(pool.pooled_width())});
             std::span<uint8_t> dst{out.mutable_data(), static_cast<size_t>(out.size())};
             TensorCounters c;
             {
               py::gil_scoped_release release;
               c = t.run_layer(ops, pool, dst);
             }
             return py::make_tuple(out, counters_dict(c));
           },
           py::arg("data"), py::arg("weights"), py::arg("bias"), py::arg("kernel"), py::arg("stride"),
           py::arg("height"), py::arg("width"))
      .def("run_matmul",
           [](TensorUnit& t, const py::array& data, const py::array& weights,
              const std::optional<CArray<int32_t>>& bias) {
             check_operand_dtype(t.array(), data, "data");
             check_operand_dtype(t.array(), weights, "weights");
             const MatmulOperands ops = operands(t.array(), data, weights, bias);
             CArray<uint32_t> out({static_cast<py::ssize_t>(ops.positions), static_cast<py::ssize_t>(ops.channels)});
             std::span<uint32_t> dst{out.mutable_data(), static_cast<size_t>(out.size())};
             TensorCounters c;
             {
               py::gil_scoped_release release;
               c = t.run_matmul(ops, dst);
             }
             return py::make_tuple(out, counters_dict(c));
           },
           py::arg("data"), py::arg("weights"), py::arg("bias"))
      .def("counters", [](const TensorUnit& t) { return counters_dict(t.counters()); })
      .def("reset_counters", &TensorUnit::reset_counters)
      .def_property_readonly("vector_engine", &TensorUnit::vector_engine, py::return_value_policy::reference_internal)
      .def_property_readonly("array", &TensorUnit::array, py::return_value_policy::reference_internal);

  m.def(
      "max_pool",
      [](const CArray<uint8_t>& map, int kernel, int stride) {
        if (map.ndim() != 3) throw ConfigError("max_pool takes a (channels, height, width) uint8 map");
        PoolConfig p{kernel, stride, map.shape(1), map.shape(2)};
        const auto out = max_pool(view(map), map.shape(0), p);
        CArray<uint8_t> r({map.shape(0), static_cast<py::ssize_t>(p.pooled_height()),
                           static_cast<py::ssize_t>(p.pooled_width())});
        std::copy(out.begin(), out.end(), r.mutable_data());
        return r;
      },
      py::arg("map").noconvert(), py::arg("kernel"), py::arg("stride"));
}

}  // namespace wafersim::bindings
