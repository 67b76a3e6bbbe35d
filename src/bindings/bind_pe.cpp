// The compute element and its lone-PE test bench, plus the 20-bit decoder (for tests and
// the disassembler's cross-checks). numpy arrays arrive C-contiguous with the exact dtype
// (python/wafersim/pe.py prepares them).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/pe/ce_config.hpp"
#include "wafersim/pe/compute_element.hpp"
#include "wafersim/pe/counters32.hpp"
#include "wafersim/pe/id_counters.hpp"
#include "wafersim/pe/isa.hpp"
#include "wafersim/pe/lone_pe.hpp"
#include "wafersim/pe/queue_bank.hpp"

namespace wafersim::bindings {

using namespace wafersim::pe;

namespace {

constexpr uint64_t kSlice = uint64_t{1} << 20;  // cycles between checks for Ctrl-C

DsrSet dsr_set_named(const std::string& s) {
  if (s == "s0" || s == "S0") return DsrSet::s0;
  if (s == "s1" || s == "S1") return DsrSet::s1;
  if (s == "d" || s == "D") return DsrSet::d;
  throw ConfigError("DSR set must be 's0', 's1' or 'd', got '" + s + "'");
}

const char* start_name(TaskStart s) {
  switch (s) {
    case TaskStart::data_wavelet: return "data_wavelet";
    case TaskStart::control_wavelet: return "control_wavelet";
    case TaskStart::activation: return "activation";
  }
  return "?";
}

}  // namespace

py::dict ce_stats_dict(const CeStats& s) {
  py::dict d;
  d["cycles"] = s.cycles;
  d["busy_cycles"] = s.busy_cycles;
  d["stall_cycles"] = s.stall_cycles;
  py::dict busy, tasks, occ;
  for (int i = 0; i < fabric::kMaxColorIds; ++i) {
    if (s.busy_by_id[i]) busy[py::int_(i)] = s.busy_by_id[i];
    if (s.tasks_by_id[i]) tasks[py::int_(i)] = s.tasks_by_id[i];
    if (s.max_input_occupancy[i]) occ[py::int_(i)] = static_cast<int>(s.max_input_occupancy[i]);
  }
  d["busy_by_task"] = busy;
  d["tasks_started"] = tasks;
  d["max_input_occupancy"] = occ;
  py::dict ins;
  for (int i = 1; i < isa::kOps; ++i) {
    if (s.instructions[i]) ins[isa::kOpInfo[i].mnemonic] = s.instructions[i];
  }
  d["instructions"] = ins;
  py::dict st;
  for (int i = 1; i < kStallCauses; ++i) {
    if (s.stalls[i]) st[stall_cause_name(static_cast<StallCause>(i))] = s.stalls[i];
  }
  d["stalls"] = st;
  py::dict uw;
  for (int i = 1; i < kStallCauses; ++i) {
    if (s.microthread_waits[i]) uw[stall_cause_name(static_cast<StallCause>(i))] = s.microthread_waits[i];
  }
  d["microthread_waits"] = uw;
  d["microthread_blocked"] = s.microthread_blocked;
  d["iterations"] = s.iterations;
  d["microthread_iterations"] = s.microthread_iterations;
  d["element_ops"] = s.element_ops;
  d["suspensions"] = s.suspensions;
  d["wavelets_in"] = s.wavelets_in;
  d["wavelets_out"] = s.wavelets_out;
  d["wavelets_local"] = s.wavelets_local;
  d["wavelets_filtered"] = s.wavelets_filtered;
  py::dict received, filtered;
  for (int i = 0; i < fabric::kMaxColorIds; ++i) {
    if (s.received_by_color[i]) received[py::int_(i)] = s.received_by_color[i];
    if (s.filtered_by_color[i]) filtered[py::int_(i)] = s.filtered_by_color[i];
  }
  d["received_by_color"] = received;
  d["filtered_by_color"] = filtered;
  d["tensor_passes"] = s.tensor_passes;
  d["tensor_cycles"] = s.tensor_cycles;
  d["tensor_macs"] = s.tensor_macs;
  py::list spans, uspans;
  for (const auto& t : s.task_spans) {
    spans.append(py::make_tuple(static_cast<int>(t.id), start_name(t.how), t.start, t.end));
  }
  for (const auto& u : s.microthread_spans) {
    uspans.append(py::make_tuple(static_cast<int>(u.slot), static_cast<int>(u.owner),
                                 static_cast<int>(u.pc), u.start, u.end));
  }
  d["task_spans"] = spans;
  d["microthread_spans"] = uspans;
  py::list ids;
  for (const auto& e : s.id_events) {
    ids.append(py::make_tuple(id_change_name(e.change), e.ids, e.cycle, id_cause_name(e.cause)));
  }
  d["id_events"] = ids;
  if (!s.busy_by_pc.empty()) {
    d["busy_by_pc"] = py::array_t<uint64_t>(static_cast<py::ssize_t>(s.busy_by_pc.size()),
                                            s.busy_by_pc.data());
  }
  return d;
}

namespace {

py::dict sink_dict(const std::vector<SinkRecord>& recs) {
  const auto n = static_cast<py::ssize_t>(recs.size());
  CArray<uint64_t> cycle(n);
  CArray<uint32_t> data(n), injected(n);
  CArray<uint16_t> index(n);
  CArray<bool> ctrl(n);
  for (py::ssize_t i = 0; i < n; ++i) {
    const SinkRecord& r = recs[static_cast<size_t>(i)];
    cycle.mutable_data()[i] = r.cycle;
    data.mutable_data()[i] = r.wavelet.data;
    injected.mutable_data()[i] = r.wavelet.injected_cycle;
    index.mutable_data()[i] = r.wavelet.index;
    ctrl.mutable_data()[i] = r.wavelet.ctrl;
  }
  py::dict d;
  d["cycle"] = cycle;
  d["data"] = data;
  d["index"] = index;
  d["ctrl"] = ctrl;
  d["injected"] = injected;
  return d;
}

}  // namespace

void bind_pe(py::module_& root) {
  py::module_ m = root.def_submodule("pe", "compute element, ISA decoder and lone-PE bench");

  py::enum_<PickerPolicy>(m, "PickerPolicy")
      .value("round_robin", PickerPolicy::round_robin)
      .value("pick_from_last", PickerPolicy::pick_from_last);

  py::class_<CeConfig>(m, "CeConfig")
      .def(py::init<>())
      .def_readwrite("memory_bytes", &CeConfig::memory_bytes)
      .def_readwrite("code_bytes", &CeConfig::code_bytes)
      .def_readwrite("fabric_colors", &CeConfig::fabric_colors)
      .def_readwrite("input_queue_depth", &CeConfig::input_queue_depth)
      .def_readwrite("output_queue_depth", &CeConfig::output_queue_depth)
      .def_readwrite("microthreads", &CeConfig::microthreads)
      .def_readwrite("task_start_latency", &CeConfig::task_start_latency)
      .def_readwrite("picker", &CeConfig::picker)
      .def_readwrite("rng_resources", &CeConfig::rng_resources)
      .def_readwrite("rng_seed", &CeConfig::rng_seed)
      .def_readwrite("row", &CeConfig::row)
      .def_readwrite("col", &CeConfig::col)
      .def_readwrite("trace", &CeConfig::trace)
      .def_readwrite("profile", &CeConfig::profile)
      .def_readwrite("block_holds_microthreads", &CeConfig::block_holds_microthreads)
      .def_readwrite("bulk_vector", &CeConfig::bulk_vector)
      .def_readwrite("tensor_unit", &CeConfig::tensor_unit)
      .def(
          "set_tensor_unit",
          [](CeConfig& c, int rows, int cols, int lanes, const std::string& dtype, bool ws, bool ds,
             int queue_rows, int sram_bytes, const std::string& pipeline, const std::string& mode) {
            c.tensor = tensor_unit_config(rows, cols, lanes, dtype, ws, ds, queue_rows, sram_bytes,
                                          pipeline, mode);
            c.tensor_unit = true;
          },
          py::arg("rows"), py::arg("cols"), py::arg("lanes"), py::arg("dtype"),
          py::arg("weight_signed"), py::arg("data_signed"), py::arg("input_queue_rows"),
          py::arg("sram_bytes"), py::arg("pipeline"), py::arg("mode"))
      .def_property_readonly("data_bytes", &CeConfig::data_bytes)
      .def_property_readonly("max_instructions", &CeConfig::max_instructions)
      .def("validate", [](const CeConfig& c) { validate(c); });

  m.def(
      "decode",
      [](uint32_t word) {
        const Instruction in = decode(word);
        py::dict d;
        d["mnemonic"] = in.mnemonic();
        d["family"] = isa::kFamilyInfo[static_cast<int>(in.family)].name;
        d["op0_type"] = in.op0_type;
        d["op0"] = in.op0;
        d["op1_type"] = in.op1_type;
        d["op1"] = in.op1;
        d["imm_high"] = in.imm_high;
        d["imm_low"] = in.imm_low;
        d["term"] = in.term;
        d["reason"] = illegal_reason(in);
        return d;
      },
      py::arg("word"), "Decodes a 20-bit word with the C++ decoder (mnemonic 'illegal' if none).");
  m.def(
      "legal_words",
      [](const CArray<uint32_t>& words) {
        CArray<bool> out(words.size());
        std::ranges::transform(view(words), out.mutable_data(),
                               [](uint32_t w) { return decode(w).op != isa::Op::illegal; });
        return out;
      },
      py::arg("words").noconvert(),
      "For each word (uint32 array): does the C++ decoder take it for an instruction?");

  m.def(
      "counters32_sums",
      [](const std::vector<std::pair<int, uint64_t>>& adds) {
        Counters32<4> c;  // (a test reaches past 2^32 here, not in four billion cycles)
        for (const auto& [i, n] : adds) {
          if (i < 0 || i >= 4) throw ConfigError("counter index must be 0..3");
          if (n == 1) {
            c.increment(i);  // the counting code's ++
          } else {
            c.add(i, n);     // its += n
          }
        }
        return std::vector<uint64_t>{c.get(0), c.get(1), c.get(2), c.get(3)};
      },
      py::arg("adds"),
      "Adds each (index, n) to four counters kept as a CE keeps its per-id counts; the sums.");

  m.def(
      "id_counters_sums",
      [](const std::vector<std::tuple<int, int, uint64_t>>& adds) {
        IdCounters32<2> c;  // two columns, as a CE keeps its counts by id and color
        for (const auto& [column, id, n] : adds) {
          if (column < 0 || column >= 2) throw ConfigError("column must be 0 or 1");
          if (id < 0 || id >= fabric::kMaxColorIds) throw ConfigError("id must be 0..63");
          if (n == 1) {
            c.increment(column, id);
          } else {
            c.add(column, id, n);
          }
        }
        std::vector<std::array<uint64_t, fabric::kMaxColorIds>> out(2);
        for (int column = 0; column < 2; ++column) c.copy_to(column, out[column]);
        return out;
      },
      py::arg("adds"),
      "Adds each (column, id, n) to a two-column table of counters by id kept as a CE "
      "keeps its counts by id and color (a row for each of the first eight ids); the sums "
      "by column, then id.");

  m.def(
      "queue_bank_ops",
      [](int queues, int capacity, int crowded_above,
         const std::vector<std::pair<int, int64_t>>& ops) {
        if (queues < 1 || queues > QueueBank::kMaxQueues) {
          throw ConfigError("queues must be 1.." + std::to_string(QueueBank::kMaxQueues));
        }
        if (capacity < 1 || capacity > 255) throw ConfigError("capacity must be 1..255");
        QueueBank bank(queues, capacity, crowded_above);
        std::vector<std::tuple<int64_t, uint64_t, uint64_t, int, int64_t>> out;
        for (const auto& [q, value] : ops) {
          if (q < 0 || q >= queues) throw ConfigError("queue index out of range");
          int64_t popped = -1;
          if (value >= 0) {
            if (bank.full(q)) throw ConfigError("push into a full queue");
            fabric::Wavelet w;
            w.color = static_cast<uint8_t>(q);
            w.data = static_cast<uint32_t>(value);
            bank.push(q, w);
          } else {
            if (bank.empty(q)) throw ConfigError("pop from an empty queue");
            popped = bank.pop(q).data;
          }
          const int64_t front = bank.empty(q) ? -1 : int64_t{bank.front(q).data};
          out.emplace_back(popped, bank.nonempty(), bank.crowded(), bank.size(q), front);
        }
        return out;
      },
      py::arg("queues"), py::arg("capacity"), py::arg("crowded_above"), py::arg("ops"),
      "Runs (queue, value) pushes (value >= 0: a wavelet with that data) and pops (value < 0) "
      "on a CE queue bank; after each: (popped data or -1, nonempty mask, crowded mask, "
      "size of that queue, its front's data or -1).");

  py::class_<ComputeElement>(m, "ComputeElement",
                             "One PE's compute element (owned by a LonePe or a Wafer)")
      .def(
          "load_code",
          [](ComputeElement& ce, uint32_t first, const CArray<uint32_t>& words) {
            ce.load_code(first, view(words));
          },
          py::arg("first"), py::arg("words").noconvert())
      .def("fetch_word", &ComputeElement::fetch_word)
      .def(
          "write_memory",
          [](ComputeElement& ce, uint32_t addr, const CArray<uint8_t>& bytes) {
            ce.write_memory(addr, view(bytes));
          },
          py::arg("addr"), py::arg("bytes").noconvert())
      .def(
          "read_memory",
          [](const ComputeElement& ce, uint32_t addr, uint32_t n) {
            ce.check_memory_range("read", addr, n);  // before allocating n bytes
            CArray<uint8_t> out(static_cast<py::ssize_t>(n));
            ce.read_memory(addr, std::span<uint8_t>(out.mutable_data(), n));
            return out;
          },
          py::arg("addr"), py::arg("n"))
      .def_property("base", &ComputeElement::base, &ComputeElement::set_base)
      .def_property_readonly("config", &ComputeElement::config)
      .def("activate", &ComputeElement::activate, py::arg("id"))
      .def("block", &ComputeElement::block, py::arg("id"))
      .def("unblock", &ComputeElement::unblock, py::arg("id"))
      .def("set_filter", &ComputeElement::set_filter, py::arg("color"), py::arg("lowest"),
           py::arg("highest"))
      .def("clear_filter", &ComputeElement::clear_filter, py::arg("color"))
      .def("filter", &ComputeElement::filter, py::arg("color"))
      .def("gpr", &ComputeElement::gpr, py::arg("r"))
      .def("set_gpr", &ComputeElement::set_gpr)
      .def("dsr", [](const ComputeElement& ce, const std::string& s, int n) { return ce.dsr(dsr_set_named(s), n); })
      .def("set_dsr", [](ComputeElement& ce, const std::string& s, int n, uint64_t raw) {
        ce.set_dsr(dsr_set_named(s), n, raw);
      })
      .def("xdsr", &ComputeElement::xdsr)
      .def("set_xdsr", &ComputeElement::set_xdsr)
      .def("stride_reg", &ComputeElement::stride_reg)
      .def("set_stride_reg", &ComputeElement::set_stride_reg)
      .def_property_readonly("flag", &ComputeElement::flag)
      .def_property_readonly("active_ids", &ComputeElement::active_ids)
      .def_property_readonly("blocked_ids", &ComputeElement::blocked_ids)
      .def("input_queue_size", &ComputeElement::input_queue_size)
      .def("output_queue_size", &ComputeElement::output_queue_size)
      .def_property_readonly("stall_to_router", &ComputeElement::stall_to_router)
      .def_property_readonly("task_running", &ComputeElement::task_running)
      .def_property_readonly("running_task", &ComputeElement::running_task)
      .def_property_readonly("pc", &ComputeElement::pc)
      .def_property_readonly("microthreads_in_use", &ComputeElement::microthreads_in_use)
      .def_property("fp_control", &ComputeElement::fp_control, &ComputeElement::set_fp_control)
      .def_property_readonly("idle", &ComputeElement::idle)
      .def("stats", [](ComputeElement& ce) { return ce_stats_dict(ce.stats()); })
      .def("set_trace", &ComputeElement::set_trace, py::arg("on"))
      .def("describe_wait", &ComputeElement::describe_wait);

  py::class_<LonePe>(m, "LonePe")
      .def(py::init<const CeConfig&, uint64_t, int>(), py::arg("config"), py::arg("loopback"),
           py::arg("router_queue_depth") = 2)
      .def_property_readonly("ce", [](LonePe& p) -> ComputeElement& { return p.ce(); },
                             py::return_value_policy::reference_internal)
      .def_property_readonly("cycle", &LonePe::cycle)
      .def_property_readonly("loopback", &LonePe::loopback)
      .def(
          "inject",
          [](LonePe& p, int color, const CArray<uint32_t>& data, const CArray<uint16_t>& index,
             const CArray<uint8_t>& ctrl, uint64_t start, uint32_t interval) {
            p.inject(color, view(data), view(index), view(ctrl), start, interval);
          },
          py::arg("color"), py::arg("data").noconvert(), py::arg("index").noconvert(),
          py::arg("ctrl").noconvert(), py::arg("start"), py::arg("interval"))
      .def("pending_injections", &LonePe::pending_injections, py::arg("color"))
      .def("set_sink_stalled", &LonePe::set_sink_stalled, py::arg("color"), py::arg("stalled"))
      .def("sink", [](const LonePe& p, int c) { return sink_dict(p.sink(c)); }, py::arg("color"))
      .def("clear_sinks", &LonePe::clear_sinks)
      .def(
          "run",
          [](LonePe& p, uint64_t cycles) {
            // Slices keep Ctrl-C responsive: Python's signal handlers run in between.
            while (cycles > 0) {
              const uint64_t n = std::min(cycles, kSlice);
              {
                py::gil_scoped_release release;
                p.run(n);
              }
              cycles -= n;
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
          },
          py::arg("cycles"))
      .def(
          "run_until_idle",
          [](LonePe& p, uint64_t max_cycles, uint64_t watchdog) {
            p.reset_watchdog();
            while (max_cycles > 0) {
              const uint64_t n = std::min(max_cycles, kSlice);
              bool done;
              {
                py::gil_scoped_release release;
                done = p.run_until_idle(n, watchdog);
              }
              if (done) return true;
              max_cycles -= n;
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
            return p.ce().idle() && !p.in_flight();
          },
          py::arg("max_cycles"), py::arg("watchdog"))
      .def_property_readonly("in_flight", &LonePe::in_flight)
      .def("reset_stats", [](LonePe& p) { p.ce().reset_stats(); })
      .def("describe_wait", &LonePe::describe_wait);
}

}  // namespace wafersim::bindings
