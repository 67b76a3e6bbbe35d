// Static checks of the color routes before a run. The fabric has no hardware deadlock
// avoidance: software must configure routes "free of dependent loops" [0304]. The check
// builds the channel-dependency graph (a channel is one link carrying one color; it
// depends on the channels its color continues on at the next router) and reports every
// color whose graph has a cycle, with the links of that cycle. It also checks that each
// link a color is sent on is a configured source of that color at the receiver, so the
// receiver's stall reaches the sender [0322] and no wavelet can be lost.
#pragma once

#include "wafersim/fabric/fabric.hpp"

namespace wafersim::fabric {

// Throws RouteError naming colors, routers and links; does nothing in packet mode.
void check_routes(const Fabric& fabric);

}  // namespace wafersim::fabric
