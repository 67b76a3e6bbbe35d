// numpy-array entry points of the numerics layer. Arrays arrive C-contiguous with the
// exact dtype (the Python wrapper prepares them) and are read in place.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "wafersim/errors.hpp"
#include "wafersim/numerics/convert.hpp"
#include "wafersim/numerics/fast_fma.hpp"
#include "wafersim/numerics/fast_fma_check.hpp"
#include "wafersim/numerics/fast_fma_lanes.hpp"
#include "wafersim/numerics/fp_control.hpp"
#include "wafersim/numerics/lfsr.hpp"

namespace wafersim::bindings {

using namespace wafersim::numerics;

namespace {

template <typename Out, typename In>
CArray<Out> same_shape(const CArray<In>& a) {
  return CArray<Out>(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
}

template <typename In>
CArray<uint16_t> round_fp16(const CArray<In>& x, const FpControl& ctl, LfsrBank* rng) {
  auto out = same_shape<uint16_t>(x);
  std::span<uint16_t> dst{out.mutable_data(), static_cast<size_t>(out.size())};
  py::gil_scoped_release release;
  round_to_fp16(view(x), dst, ctl, rng);
  return out;
}

const FloatFormat& format_named(const std::string& name) {
  if (name == "fp16") return kFp16;
  if (name == "bf16") return kBf16;
  if (name == "fp32") return kFp32;
  throw ConfigError("dtype must be 'fp16', 'bf16' or 'fp32', got '" + name + "'");
}

// Element-wise a*b+c on bit patterns (uint16 for fp16/bf16, uint32 for fp32).
template <typename Bits>
CArray<Bits> fma_array(const CArray<Bits>& a, const CArray<Bits>& b, const CArray<Bits>& c,
                       const FloatFormat& f, const FpControl& ctl, LfsrBank* rng) {
  if (a.size() != b.size() || a.size() != c.size()) {
    throw ConfigError("fma operands must have the same size, got " + std::to_string(a.size()) +
                      ", " + std::to_string(b.size()) + " and " + std::to_string(c.size()));
  }
  validate(ctl);
  if (ctl.mode == RoundingMode::stochastic && rng == nullptr) {
    throw ConfigError("stochastic rounding needs random-number resources (rng)");
  }
  if (ctl.mode == RoundingMode::stochastic) rng->resource(ctl.rng);  // checks the index
  auto out = same_shape<Bits>(a);
  const Bits *pa = a.data(), *pb = b.data(), *pc = c.data();
  Bits* po = out.mutable_data();
  const py::ssize_t n = a.size();
  py::gil_scoped_release release;
  for (py::ssize_t i = 0; i < n; ++i) {
    po[i] = static_cast<Bits>(fast_fma_bits(pa[i], pb[i], pc[i], f, ctl, rng));
  }
  return out;
}

Fp16Build build_named(const std::string& name) {
  if (name == "auto") return Fp16Build::automatic;
  if (name == "portable") return Fp16Build::portable;
  if (name == "f16c") return Fp16Build::f16c;
  throw ConfigError("build must be 'auto', 'portable' or 'f16c', got '" + name + "'");
}

LanesBuild lanes_build_named(const std::string& name) {
  if (name == "auto") return LanesBuild::automatic;
  if (name == "portable") return LanesBuild::portable;
  if (name == "simd") return LanesBuild::simd;
  throw ConfigError("build must be 'auto', 'portable' or 'simd', got '" + name + "'");
}

CheckedOp op_named(const std::string& name) {
  if (name == "add") return CheckedOp::add;
  if (name == "sub") return CheckedOp::sub;
  if (name == "mul") return CheckedOp::mul;
  if (name == "fma") return CheckedOp::fma;
  throw ConfigError("op must be 'add', 'sub', 'mul' or 'fma', got '" + name + "'");
}

py::dict check_dict(const FastCheck& r) {
  py::dict d;
  d["checked"] = r.checked;
  d["mismatches"] = r.mismatches;
  d["a"] = r.a;
  d["b"] = r.b;
  d["c"] = r.c;
  d["fast"] = r.fast;
  d["reference"] = r.reference;
  return d;
}

}  // namespace

void bind_numerics(py::module_& root) {
  py::module_ m = root.def_submodule("numerics", "IEEE conversions, rounding and LFSRs");

  py::enum_<RoundingMode>(m, "RoundingMode")
      .value("nearest_even", RoundingMode::nearest_even)
      .value("nearest_away", RoundingMode::nearest_away)
      .value("toward_zero", RoundingMode::toward_zero)
      .value("toward_positive", RoundingMode::toward_positive)
      .value("toward_negative", RoundingMode::toward_negative)
      .value("stochastic", RoundingMode::stochastic);
  py::enum_<Subnormals>(m, "Subnormals")
      .value("keep", Subnormals::keep)
      .value("flush_to_zero", Subnormals::flush_to_zero)
      .value("flush_to_min_normal", Subnormals::flush_to_min_normal);

  py::class_<FpControl>(m, "FpControl")
      .def(py::init<>())
      .def_readwrite("mode", &FpControl::mode)
      .def_readwrite("rng", &FpControl::rng)
      .def_readwrite("subnormals", &FpControl::subnormals)
      .def_readwrite("max_sat", &FpControl::max_sat)
      .def_readwrite("min_sat", &FpControl::min_sat)
      .def_readwrite("stochastic_bits", &FpControl::stochastic_bits)
      .def_readwrite("stochastic_or_lower", &FpControl::stochastic_or_lower);

  py::class_<LfsrBank>(m, "LfsrBank")
      .def(py::init<int, uint64_t>(), py::arg("count") = 4, py::arg("seed") = 0)
      .def_property_readonly("count", &LfsrBank::count)
      .def("seed", &LfsrBank::seed, py::arg("seed"))
      .def("state", [](LfsrBank& b, int i) { return b.resource(i).state(); }, py::arg("index"))
      .def("set_state", [](LfsrBank& b, int i, uint32_t s) { b.resource(i).set_state(s); },
           py::arg("index"), py::arg("state"))
      .def("next_bits", &LfsrBank::next_bits, py::arg("index"), py::arg("n"));

  m.def("round_fp16_from_fp32", &round_fp16<float>, py::arg("x").noconvert(), py::arg("ctl"),
        py::arg("rng"));
  m.def("round_fp16_from_fp64", &round_fp16<double>, py::arg("x").noconvert(), py::arg("ctl"),
        py::arg("rng"));
  m.def(
      "fp16_to_fp32",
      [](const CArray<uint16_t>& h) {
        auto out = same_shape<float>(h);
        std::span<float> dst{out.mutable_data(), static_cast<size_t>(out.size())};
        py::gil_scoped_release release;
        fp16_to_fp32(view(h), dst);
        return out;
      },
      py::arg("bits").noconvert());
  m.def(
      "fma16",
      [](const CArray<uint16_t>& a, const CArray<uint16_t>& b, const CArray<uint16_t>& c,
         const std::string& dtype, const FpControl& ctl, LfsrBank* rng) {
        return fma_array(a, b, c, format_named(dtype), ctl, rng);
      },
      py::arg("a").noconvert(), py::arg("b").noconvert(), py::arg("c").noconvert(),
      py::arg("dtype"), py::arg("ctl"), py::arg("rng"));
  m.def(
      "fma32",
      [](const CArray<uint32_t>& a, const CArray<uint32_t>& b, const CArray<uint32_t>& c,
         const FpControl& ctl, LfsrBank* rng) { return fma_array(a, b, c, kFp32, ctl, rng); },
      py::arg("a").noconvert(), py::arg("b").noconvert(), py::arg("c").noconvert(),
      py::arg("ctl"), py::arg("rng"));

  m.def("host_has_f16c", &host_has_f16c);
  m.def("fp16_fast_build",
        [] { return loaded_fp16_build() == Fp16Build::f16c ? "f16c" : "portable"; });
  m.def(
      "check_fast_fp16_pairs",
      [](const std::string& op, const FpControl& ctl, const std::string& build, uint64_t first,
         uint64_t stride, uint64_t seed) {
        const CheckedOp o = op_named(op);
        const Fp16Build b = build_named(build);
        FastCheck r;
        {
          py::gil_scoped_release release;
          r = check_fp16_pairs(o, ctl, b, first, stride, seed);
        }
        return check_dict(r);
      },
      py::arg("op"), py::arg("ctl"), py::arg("build"), py::arg("first"), py::arg("stride"),
      py::arg("seed"));
  m.def(
      "check_fast_fma",
      [](const std::string& dtype, const FpControl& ctl, const std::string& build, uint64_t n,
         uint64_t seed) {
        const FloatFormat& f = format_named(dtype);
        const Fp16Build b = build_named(build);
        FastCheck r;
        {
          py::gil_scoped_release release;
          r = check_random_fma(f, ctl, b, n, seed);
        }
        return check_dict(r);
      },
      py::arg("dtype"), py::arg("ctl"), py::arg("build"), py::arg("n"), py::arg("seed"));

  m.def("host_has_lane_simd", &host_has_lane_simd);
  m.def("lanes_fast_build",
        [] { return loaded_lanes_build() == LanesBuild::simd ? "simd" : "portable"; });
  m.def(
      "check_fast_fma_lanes",
      [](const std::string& dtype, const FpControl& ctl, const std::string& build, uint64_t n,
         uint64_t seed) {
        const FloatFormat& f = format_named(dtype);
        const LanesBuild b = lanes_build_named(build);
        FastCheck r;
        {
          py::gil_scoped_release release;
          r = check_random_fma_lanes(f, ctl, b, n, seed);
        }
        return check_dict(r);
      },
      py::arg("dtype"), py::arg("ctl"), py::arg("build"), py::arg("n"), py::arg("seed"));
}

}  // namespace wafersim::bindings
