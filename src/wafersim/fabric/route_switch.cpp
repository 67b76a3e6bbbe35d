#include "wafersim/fabric/route_switch.hpp"

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

}  // namespace wafersim::fabric
