#include "wafersim/fabric/route_switch.hpp"

#include <bit>
#include <cstddef>

namespace wafersim::fabric {

void RouteSwitch::rebuild(DirMask route_dest, DirMask route_src) {
  dest[0] = route_dest;
  src[0] = route_src;
  for (int p = 1; p <= last; ++p) {
    const SwitchPosition& s = positions[static_cast<std::size_t>(p - 1)];
    dest[p] = s.rx ? dest[p - 1] : s.mask;
    src[p] = s.rx ? s.mask : src[p - 1];
  }
  src_any = src_union();
}

DirMask RouteSwitch::dest_union() const {
  DirMask m = 0;
  for (int p = 0; p <= last; ++p) m |= dest[p];
  return m;
}

DirMask RouteSwitch::src_union() const {
  DirMask m = 0;
  for (int p = 0; p <= last; ++p) m |= src[p];
  return m;
}

std::string position_list(unsigned positions) {
  std::string out;
  for (unsigned m = positions; m; m &= m - 1) {
    out += (out.empty() ? "" : ", ") + std::to_string(std::countr_zero(m));
  }
  return out;
}

}  // namespace wafersim::fabric
