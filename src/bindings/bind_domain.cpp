// A wafer split into domains of rows (sim/domain.hpp, docs/scale.md): the exchange is
// written in Python (wafersim.distributed, through mpi4py) and called by the cycle loop.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/sim/cut_messages.hpp"
#include "wafersim/sim/domain.hpp"
#include "wafersim/sim/wafer.hpp"
#include "wafersim/sim/wafer_view.hpp"
#include "wafersim/sim/watchdog.hpp"

namespace wafersim::bindings {

using sim::CutExchange;
using sim::CutMessages;
using sim::DomainFlags;
using sim::Wafer;

namespace {

class PyCutExchange : public CutExchange {
 public:
  void send_cuts(uint64_t cycle) override {
    PYBIND11_OVERRIDE_PURE(void, CutExchange, send_cuts, cycle);
  }
  void receive_cuts(uint64_t cycle) override {
    PYBIND11_OVERRIDE_PURE(void, CutExchange, receive_cuts, cycle);
  }
  DomainFlags after_phase_b(uint64_t cycle, const DomainFlags& local) override {
    PYBIND11_OVERRIDE_PURE(DomainFlags, CutExchange, after_phase_b, cycle, local);
  }
};

}  // namespace

void bind_domain(py::module_& m) {
  py::module_ fabric = m.attr("fabric");
  py::class_<DomainFlags>(fabric, "DomainFlags")
      .def(py::init<>())
      .def_readwrite("work", &DomainFlags::work)
      .def_readwrite("progress", &DomainFlags::progress)
      .def_readwrite("queued", &DomainFlags::queued)
      .def_readwrite("error_step", &DomainFlags::error_step)
      .def_readwrite("error_domain", &DomainFlags::error_domain);
  py::class_<CutExchange, PyCutExchange>(fabric, "CutExchange")
      .def(py::init<>())
      .def("send_cuts", &CutExchange::send_cuts, py::arg("cycle"))
      .def("receive_cuts", &CutExchange::receive_cuts, py::arg("cycle"))
      .def("after_phase_b", &CutExchange::after_phase_b, py::arg("cycle"), py::arg("local"));

  auto cls = py::reinterpret_borrow<py::class_<Wafer>>(fabric.attr("Wafer"));
  cls.def(
         "set_domain",
         [](Wafer& w, const std::vector<std::pair<int, int>>& blocks, int index,
            CutExchange* exchange) { w.simulator().set_domain(blocks, index, exchange); },
         py::arg("blocks"), py::arg("index"), py::arg("exchange").none(true),
         py::keep_alive<1, 4>())
      .def_property_readonly("domain",
                             [](Wafer& w) { return w.simulator().domain_blocks(); })
      // The deadlock report of a split wafer (watchdog.hpp, wafer_view.hpp): this domain's
      // facts, then its part given every domain's facts, then the report from every part.
      .def("deadlock_facts",
           [](Wafer& w) {
             const auto owned = sim::rows_of(w.fabric(), w.simulator().domain_blocks());
             return py::bytes(sim::deadlock_facts(w.fabric(), owned).encode());
           })
      .def(
          "deadlock_part",
          [](Wafer& w, const std::vector<std::string>& every_facts) {
            std::vector<sim::DeadlockFacts> every;
            for (const std::string& b : every_facts) every.push_back(sim::DeadlockFacts::decode(b));
            const sim::WaferView view(
                w.fabric(), sim::rows_of(w.fabric(), w.simulator().domain_blocks()), every);
            return py::bytes(sim::deadlock_part(view).encode());
          },
          py::arg("every_facts"))
      .def(
          "merge_deadlock_report",
          [](const Wafer& w, const std::vector<std::string>& every_part, uint64_t cycle) {
            std::vector<sim::DeadlockPart> parts;
            for (const std::string& b : every_part) parts.push_back(sim::DeadlockPart::decode(b));
            return sim::merge_deadlock_report(w.fabric(), cycle, parts);
          },
          py::arg("every_part"), py::arg("cycle"))
      // The state of the runtime switches on this domain's rows, and the others' written
      // into this domain's copy (Fabric::export_switch_states).
      .def("export_switch_states",
           [](Wafer& w) {
             return to_numpy(w.fabric().export_switch_states(
                 sim::rows_of(w.fabric(), w.simulator().domain_blocks())));
           })
      .def(
          "import_switch_states",
          [](Wafer& w, const CArray<uint64_t>& words) {
            w.fabric().import_switch_states(view(words));
          },
          py::arg("words"))
      .def_property_readonly("routes_version",
                             [](const Wafer& w) { return w.fabric().routes_version(); });

  // One message per neighbouring domain and meeting point (sim/cut_messages.hpp).
  py::class_<CutMessages>(fabric, "CutMessages")
      .def(py::init([](Wafer& w, std::vector<std::vector<std::pair<int, int>>> neighbours) {
             return std::make_unique<CutMessages>(w.fabric(), std::move(neighbours));
           }),
           py::arg("wafer"), py::arg("neighbours"), py::keep_alive<1, 2>())
      .def("sends_capacity", &CutMessages::sends_capacity, py::arg("k"))
      .def(
          "write_sends",
          [](CutMessages& m, size_t k, uint64_t cycle, CArray<uint8_t>& out) {
            return m.write_sends(k, cycle, out.mutable_data(), static_cast<size_t>(out.size()));
          },
          py::arg("k"), py::arg("cycle"), py::arg("out").noconvert())
      .def(
          "read_sends",
          [](CutMessages& m, size_t k, uint64_t cycle, const CArray<uint8_t>& in) {
            m.read_sends(k, cycle, in.data(), static_cast<size_t>(in.size()));
          },
          py::arg("k"), py::arg("cycle"), py::arg("in").noconvert())
      .def("border_capacity", &CutMessages::border_capacity, py::arg("k"))
      .def(
          "write_borders",
          [](CutMessages& m, size_t k, CArray<uint64_t>& out) {
            return m.write_borders(k, out.mutable_data(), static_cast<size_t>(out.size()));
          },
          py::arg("k"), py::arg("out").noconvert())
      .def(
          "read_borders",
          [](CutMessages& m, size_t k, const CArray<uint64_t>& in) {
            m.read_borders(k, in.data(), static_cast<size_t>(in.size()));
          },
          py::arg("k"), py::arg("in").noconvert());
}

}  // namespace wafersim::bindings
