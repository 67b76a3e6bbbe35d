// The compute elements of a wafer, added to wafersim._core.fabric.Wafer: created when a
// program is loaded, addressed by router id, with batch operations over many PEs (load,
// memory copies, launch) so that a rectangle costs one call. Arrays arrive C-contiguous
// with the exact dtype (python/wafersim/wafer_pes.py prepares them).
#include <algorithm>
#include <chrono>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/sim/wafer.hpp"

namespace wafersim::bindings {

using sim::Wafer;

namespace {

pe::ComputeElement& ce_at(Wafer& w, int64_t id) {
  pe::ComputeElement* ce =
      (id < 0 || id >= static_cast<int64_t>(w.fabric().router_count()))
          ? nullptr
          : w.ce(static_cast<uint32_t>(id));
  if (ce == nullptr) {
    const int cols = w.fabric().cols();
    throw ConfigError("PE (" + std::to_string(id / cols) + ", " + std::to_string(id % cols) +
                      ") has no program: load one first");
  }
  return *ce;
}

}  // namespace

void bind_wafer_pe(py::module_& root) {
  root.def(
      "ce_stats_unpack",
      [](const py::bytes& packed) {
        pe::CeStats s;
        static_cast<pe::CeCounters&>(s) = pe::unpack_counters(std::string_view(packed));
        return ce_stats_dict(s);
      },
      py::arg("packed"));
  auto cls = py::reinterpret_borrow<py::class_<Wafer>>(root.attr("fabric").attr("Wafer"));
  cls.def_property(
         "ce_config", [](const Wafer& w) { return w.ce_config(); },  // a copy
         [](Wafer& w, const pe::CeConfig& c) { w.set_ce_config(c); })
      .def("reset_ces", [](Wafer& w, const CArray<uint32_t>& ids) { w.reset_ces(view(ids)); },
           py::arg("ids").noconvert())
      .def("check_reset_ces",
           [](Wafer& w, const CArray<uint32_t>& ids) { w.check_reset_ces(view(ids)); },
           py::arg("ids").noconvert())
      .def("first_unresettable_ce",
           [](Wafer& w, const CArray<uint32_t>& ids) {
             return w.first_unresettable_ce(view(ids));
           },
           py::arg("ids").noconvert())
      .def("ce", [](Wafer& w, int64_t id) -> pe::ComputeElement& { return ce_at(w, id); },
           py::return_value_policy::reference_internal, py::arg("id"))
      .def("has_ce", [](Wafer& w, int64_t id) {
        return id >= 0 && id < static_cast<int64_t>(w.fabric().router_count()) &&
               w.ce(static_cast<uint32_t>(id)) != nullptr;
      })
      .def("ce_ids",
           [](const Wafer& w) {
             const std::vector<uint32_t> ids = w.ce_ids();
             CArray<uint32_t> out(static_cast<py::ssize_t>(ids.size()));
             std::copy(ids.begin(), ids.end(), out.mutable_data());
             return out;
           })
      .def(
          "load_code",
          [](Wafer& w, const CArray<uint32_t>& ids, uint32_t base, uint32_t first,
             const CArray<uint32_t>& words) {
            for (uint32_t id : view(ids)) {
              pe::ComputeElement& ce = ce_at(w, id);
              ce.set_base(base);
              ce.load_code(first, view(words));
            }
          },
          py::arg("ids").noconvert(), py::arg("base"), py::arg("first"),
          py::arg("words").noconvert())
      .def(
          "write_memory",
          [](Wafer& w, const CArray<uint32_t>& ids, uint32_t addr, const CArray<uint8_t>& bytes) {
            // bytes: one row per PE (n, nbytes), or one row (nbytes,) for every PE.
            const size_t n = static_cast<size_t>(ids.size());
            const bool per_pe = bytes.ndim() == 2;
            if (per_pe && static_cast<size_t>(bytes.shape(0)) != n) {
              throw ConfigError("write_memory: " + std::to_string(bytes.shape(0)) +
                                " rows of bytes for " + std::to_string(n) + " PEs");
            }
            const size_t row = per_pe ? static_cast<size_t>(bytes.shape(1))
                                      : static_cast<size_t>(bytes.size());
            for (size_t i = 0; i < n; ++i) {
              const uint8_t* p = bytes.data() + (per_pe ? i * row : 0);
              ce_at(w, ids.data()[i]).write_memory(addr, {p, row});
            }
          },
          py::arg("ids").noconvert(), py::arg("addr"), py::arg("bytes").noconvert())
      .def(
          "read_memory",
          [](Wafer& w, const CArray<uint32_t>& ids, uint32_t addr, uint32_t nbytes) {
            const auto n = static_cast<py::ssize_t>(ids.size());
            for (uint32_t id : view(ids)) ce_at(w, id).check_memory_range("read", addr, nbytes);
            CArray<uint8_t> out({n, static_cast<py::ssize_t>(nbytes)});
            for (py::ssize_t i = 0; i < n; ++i) {
              uint8_t* row = out.mutable_data() + static_cast<size_t>(i) * nbytes;
              ce_at(w, ids.data()[i]).read_memory(addr, {row, nbytes});
            }
            return out;
          },
          py::arg("ids").noconvert(), py::arg("addr"), py::arg("nbytes"))
      .def(
          "activate",
          [](Wafer& w, const CArray<uint32_t>& ids, int task) {
            for (uint32_t id : view(ids)) ce_at(w, id).activate(task);
          },
          py::arg("ids").noconvert(), py::arg("task"))
      .def("set_ce_trace", &Wafer::set_ce_trace, py::arg("on"))
      .def("set_ce_profile", &Wafer::set_ce_profile, py::arg("on"))
      .def("reset_ce_stats", &Wafer::reset_ce_stats, py::arg("id"))
      .def("ce_run_stats",
           [](Wafer& w, bool packed) {
             // packed: counters without trace spans or a profile come as the bytes of
             // pe::pack_counters (ce_stats_unpack turns them into the dict)
             py::list out;
             w.ce_run_stats([&out, packed](uint32_t id, const pe::CeStats& s) {
               const bool plain = s.task_spans.empty() && s.microthread_spans.empty() &&
                                  s.id_events.empty() && s.busy_by_pc.empty();
               if (packed && plain) {
                 out.append(py::make_tuple(id, py::bytes(pe::pack_counters(s))));
               } else {
                 out.append(py::make_tuple(id, ce_stats_dict(s)));
               }
             });
             return out;
           },
           py::arg("packed") = false)
      .def("ce_run_stats_table",
           [](Wafer& w) {
             // Wafer::ce_run_stats_table as (ids, ends, packed bytes, {id: stats dict} of
             // the PEs whose statistics do not pack), for wafersim.pe_stats_table
             Wafer::RunStatsTable t;
             {
               py::gil_scoped_release release;
               t = w.ce_run_stats_table();
             }
             auto as_array = [](const std::vector<int64_t>& v) {
               py::array_t<int64_t> a(static_cast<py::ssize_t>(v.size()));
               std::copy(v.begin(), v.end(), a.mutable_data());
               return a;
             };
             py::array_t<uint8_t> bytes(static_cast<py::ssize_t>(t.blob.size()));
             std::copy(t.blob.begin(), t.blob.end(), bytes.mutable_data());
             py::dict whole;
             for (const auto& [id, s] : t.whole) whole[py::int_(id)] = ce_stats_dict(s);
             return py::make_tuple(as_array(t.ids), as_array(t.ends), bytes, whole);
           })
      .def_property(  // a tuning knob (benchmarks): below this many active routers, one thread
          "parallel_min_routers", [](Wafer& w) { return w.simulator().parallel_min_routers(); },
          [](Wafer& w, size_t n) { w.simulator().set_parallel_min_routers(n); })
      .def_property(  // microseconds a waiting thread spins before it sleeps
          "spin_wait", [](Wafer& w) { return w.simulator().spin_wait().count(); },
          [](Wafer& w, int64_t us) { w.simulator().set_spin_wait(std::chrono::microseconds(us)); })
      .def_property(  // a tuning knob (benchmarks): chunks of rows per thread
          "chunks_per_thread", [](Wafer& w) { return w.simulator().chunks_per_thread(); },
          [](Wafer& w, int n) { w.simulator().set_chunks_per_thread(n); })
      .def_property(  // time every row phase (sim/row_work.hpp; same results)
          "record_row_work", [](Wafer& w) { return w.simulator().record_row_work(); },
          [](Wafer& w, bool on) { w.simulator().set_record_row_work(on); })
      .def("take_row_work",
           [](Wafer& w) {  // what was recorded, as arrays in (cycle, row, phase) order
             const std::vector<sim::RowWork> work = w.simulator().take_row_work();
             const auto n = static_cast<py::ssize_t>(work.size());
             CArray<uint64_t> cycle(n), ns(n);
             CArray<uint32_t> row(n), routers(n);
             CArray<uint8_t> phase(n);
             for (size_t i = 0; i < work.size(); ++i) {
               cycle.mutable_data()[i] = work[i].cycle;
               ns.mutable_data()[i] = work[i].ns;
               row.mutable_data()[i] = work[i].row;
               routers.mutable_data()[i] = work[i].routers;
               phase.mutable_data()[i] = work[i].phase;
             }
             py::dict d;
             d["cycle"] = cycle;
             d["row"] = row;
             d["phase"] = phase;
             d["routers"] = routers;
             d["ns"] = ns;
             return d;
           })
      .def_property(  // compute elements that only count may sleep (same results)
          "endpoint_sleep", [](Wafer& w) { return w.simulator().endpoint_sleep(); },
          [](Wafer& w, bool on) { w.simulator().set_endpoint_sleep(on); });
}

}  // namespace wafersim::bindings
