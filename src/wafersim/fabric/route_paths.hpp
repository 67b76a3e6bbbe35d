// Static color routes from paths of routers: the Dest and Src masks [0318], [0322] that a
// path or a multicast tree [0301] gives each router it visits, and the dimension-order
// paths of seed 003 that trees follow (the rules packet mode steers each wavelet by,
// packet_routing.hpp). The one place where routes are worked out; Fabric::add_routes
// writes them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "wafersim/fabric/direction.hpp"
#include "wafersim/fabric/packet_routing.hpp"
#include "wafersim/fabric/topology.hpp"

namespace wafersim::fabric {

// A (row, col) position; it may lie outside the fabric (an edge port is one step out).
struct Point {
  int64_t row = 0;
  int64_t col = 0;
  bool operator==(const Point&) const = default;
};
std::string point_name(Point p);  // "(r, c)"

// The routers a wavelet visits from src to dst (both included) under `alg`: "xy" goes
// east/west first, then north/south [0061]; "diag_first" diagonally while both coordinates
// differ, then straight [0036], [0039]. RouteError for points outside the fabric, or for
// diag_first on a fabric without diagonals.
std::vector<Point> dimension_order_path(const Topology& t, PacketRouting alg, Point src,
                                        Point dst);

// The masks of one color at one router.
struct RouterMasks {
  uint32_t id = 0;
  DirMask dest = 0;
  DirMask src = 0;
};

// The masks of one color at the routers it reaches, in the order they were first reached.
class RouteMasks {
 public:
  RouterMasks& at(uint32_t id);
  const std::vector<RouterMasks>& entries() const { return entries_; }
  bool contains(uint32_t id) const { return index_.count(id) != 0; }

 private:
  std::vector<RouterMasks> entries_;
  std::unordered_map<uint32_t, size_t> index_;
};

// The masks of `color` along `path`, adjacent routers joined by links: the first point's
// ramp is the source and the last point's ramp the destination, or the edge port an outside
// first or last point names. RouteError naming the point when the path leaves the fabric,
// visits a router twice or jumps where no link is.
RouteMasks path_route(const Topology& t, int color, std::span<const Point> path);

// The masks of `color` from src's ramp to the ramp of every router in dsts, each branch
// following `alg` [0301]. RouteError when two branches reach a router from different
// directions, or for points outside the fabric.
RouteMasks tree_route(const Topology& t, int color, Point src, std::span<const Point> dsts,
                      PacketRouting alg);

}  // namespace wafersim::fabric
