// numpy arrays at the boundary: the C-contiguous array type the bindings accept (the Python
// wrappers prepare dtype and layout), a span over one, and a copy of a vector into one.
#pragma once

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace wafersim::bindings {

template <typename T>
using CArray = pybind11::array_t<T, pybind11::array::c_style>;

template <typename T>
std::span<const T> view(const CArray<T>& a) {
  return {a.data(), static_cast<size_t>(a.size())};
}

template <typename T>
CArray<T> to_numpy(std::span<const T> v) {
  CArray<T> out(static_cast<pybind11::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

template <typename T>
CArray<T> to_numpy(const std::vector<T>& v) {
  return to_numpy(std::span<const T>(v));
}

}  // namespace wafersim::bindings
