#include "wafersim/fabric/route_paths.hpp"

#include <map>

#include "wafersim/errors.hpp"

namespace wafersim::fabric {

namespace {

std::string fabric_size(const Topology& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.cols);
}

void require_inside(const Topology& t, Point p, const std::string& name) {
  if (!t.inside(p.row, p.col)) {
    throw RouteError(name + " " + point_name(p) + " is outside the " + fabric_size(t) +
                     " fabric");
  }
}

uint32_t id_of(const Topology& t, Point p) {
  return t.id(static_cast<int>(p.row), static_cast<int>(p.col));
}

}  // namespace

std::string point_name(Point p) {
  std::string s = "(";
  s += std::to_string(p.row);
  s += ", ";
  s += std::to_string(p.col);
  s += ")";
  return s;
}

PacketRouting routing_named(const std::string& name, const char* parameter) {
  std::string names;
  for (size_t i = 0; i < kPacketRoutingNames.size(); ++i) {
    if (name == kPacketRoutingNames[i]) return static_cast<PacketRouting>(i);
    names += (names.empty() ? "" : ", ") + std::string(kPacketRoutingNames[i]);
  }
  throw ConfigError(std::string(parameter) + " must be one of " + names + ", got '" + name +
                    "'");
}

std::vector<Point> dimension_order_path(const Topology& t, PacketRouting alg, Point src,
                                        Point dst) {
  if (alg == PacketRouting::diag_first && !t.has_diagonals()) {
    throw RouteError("algorithm 'diag_first' needs diagonal links; this fabric is a plain mesh");
  }
  require_inside(t, src, "src");
  require_inside(t, dst, "dst");
  std::vector<Point> out{src};
  for (Point p = src;;) {
    const Dir d = packet_step(t, alg, static_cast<int>(dst.col - p.col),
                              static_cast<int>(dst.row - p.row));
    if (d == kRamp) return out;
    p = {p.row + drow(d), p.col + dcol(d)};
    out.push_back(p);
  }
}

RouterMasks& RouteMasks::at(uint32_t id) {
  const auto [it, added] = index_.try_emplace(id, entries_.size());
  if (added) entries_.push_back({id, 0, 0});
  return entries_[it->second];
}

RouteMasks path_route(const Topology& t, int color, std::span<const Point> path) {
  if (path.empty()) throw RouteError("path must list at least one (row, col) point");
  const std::string of_color = " (color " + std::to_string(color) + ")";
  std::span<const Point> pts = path;
  Dir src_port = kRamp, dst_port = kRamp;
  // An outside first or last point names an edge port: the route enters or leaves there.
  if (!t.inside(pts.front().row, pts.front().col) && pts.size() > 1) {
    const auto edge = t.edge_port(pts.front().row, pts.front().col);
    if (!edge) {
      throw RouteError("path[0] = " + point_name(pts.front()) +
                       " is outside the fabric and not an edge port");
    }
    if (!t.inside(pts[1].row, pts[1].col) || edge->first != id_of(t, pts[1])) {
      throw RouteError("path of color " + std::to_string(color) + ": no link from " +
                       point_name(pts[0]) + " to " + point_name(pts[1]) + " in this " +
                       t.kind_name() + " fabric (an edge port joins only its border router)");
    }
    src_port = edge->second;
    pts = pts.subspan(1);
  }
  if (!t.inside(pts.back().row, pts.back().col) && pts.size() > 1) {
    const auto edge = t.edge_port(pts.back().row, pts.back().col);
    if (!edge) {
      throw RouteError("path[-1] = " + point_name(pts.back()) +
                       " is outside the fabric and not an edge port");
    }
    const Point before = pts[pts.size() - 2];
    if (!t.inside(before.row, before.col) || edge->first != id_of(t, before)) {
      throw RouteError("path of color " + std::to_string(color) + ": no link from " +
                       point_name(before) + " to " + point_name(pts.back()) + " in this " +
                       t.kind_name() + " fabric (an edge port joins only its border router)");
    }
    dst_port = edge->second;
    pts = pts.first(pts.size() - 1);
  }
  for (const Point& p : pts) {
    if (!t.inside(p.row, p.col)) {
      throw RouteError("path point " + point_name(p) + of_color + " leaves the " +
                       fabric_size(t) + " fabric");
    }
  }
  std::map<std::pair<int64_t, int64_t>, int> visits;
  for (const Point& p : pts) ++visits[{p.row, p.col}];
  for (const Point& p : pts) {
    if (visits[{p.row, p.col}] > 1) {
      throw RouteError("path of color " + std::to_string(color) + " visits router " +
                       point_name(p) + " twice (a loop)");
    }
  }
  RouteMasks masks;
  for (const Point& p : pts) masks.at(id_of(t, p));
  masks.at(id_of(t, pts.front())).src |= bit(src_port);
  masks.at(id_of(t, pts.back())).dest |= bit(dst_port);
  for (size_t i = 0; i + 1 < pts.size(); ++i) {
    const Point a = pts[i], b = pts[i + 1];
    const auto d = t.link_between(static_cast<int>(a.row), static_cast<int>(a.col),
                                  static_cast<int>(b.row), static_cast<int>(b.col));
    if (!d) {
      throw RouteError("path of color " + std::to_string(color) + ": no link from " +
                       point_name(a) + " to " + point_name(b) + " in this " + t.kind_name() +
                       " fabric");
    }
    masks.at(id_of(t, a)).dest |= bit(*d);
    masks.at(id_of(t, b)).src |= bit(opposite(*d));
  }
  return masks;
}

RouteMasks tree_route(const Topology& t, int color, Point src, std::span<const Point> dsts,
                      PacketRouting alg) {
  require_inside(t, src, "src");
  if (dsts.empty()) throw RouteError("route_tree needs at least one destination");
  RouteMasks masks;
  masks.at(id_of(t, src)).src |= bit(kRamp);
  std::unordered_map<uint32_t, Dir> entered;  // router -> the link a branch reached it by
  for (size_t i = 0; i < dsts.size(); ++i) {
    require_inside(t, dsts[i], "dsts[" + std::to_string(i) + "]");
    const std::vector<Point> hops = dimension_order_path(t, alg, src, dsts[i]);
    for (size_t k = 0; k + 1 < hops.size(); ++k) {
      const Point a = hops[k], b = hops[k + 1];
      const Dir d = *t.link_between(static_cast<int>(a.row), static_cast<int>(a.col),
                                    static_cast<int>(b.row), static_cast<int>(b.col));
      const auto [it, first] = entered.try_emplace(id_of(t, b), d);
      if (!first && it->second != d) {
        throw RouteError("route_tree of color " + std::to_string(color) + ": branches reach " +
                         point_name(b) + " from two directions");
      }
      masks.at(id_of(t, a)).dest |= bit(d);
      masks.at(id_of(t, b)).src |= bit(opposite(d));
    }
    masks.at(id_of(t, dsts[i])).dest |= bit(kRamp);
  }
  return masks;
}

}  // namespace wafersim::fabric
