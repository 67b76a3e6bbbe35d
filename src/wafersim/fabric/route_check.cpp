#include "wafersim/fabric/route_check.hpp"

#include <string>
#include <utility>
#include <vector>

#include "wafersim/errors.hpp"

namespace wafersim::fabric {

namespace {

constexpr int kMaxReported = 8;

std::string link(const Topology& t, uint32_t from, Dir d) {
  return router_name(t, from) + " -" + dir_name(d) + "->";
}

// Problems with the links of one color at one router: sends to a router that does not list
// the link as a source, or takes wavelets in and sends them nowhere. A color with runtime
// switches is checked over the union of its positions (route_union).
void check_links(const Fabric& f, uint32_t id, unsigned color, std::vector<std::string>& errors) {
  const Topology& t = f.topology();
  const int r = static_cast<int>(id / static_cast<uint32_t>(t.cols));
  const int c = static_cast<int>(id % static_cast<uint32_t>(t.cols));
  const auto [dest, src] = f.route_union(id, static_cast<int>(color));
  if (dest == 0 && src != 0) {
    errors.push_back("color " + std::to_string(color) + " at router " + router_name(t, id) +
                     " has sources but no destination: its wavelets could never leave");
  }
  for (DirMask m = dest & ~bit(kRamp); m; m &= m - 1) {
    const Dir d = first_dir(m);
    const int64_t n = t.neighbour(r, c, d);
    if (n < 0) continue;  // an edge port
    const auto [ndest, nsrc] = f.route_union(static_cast<uint32_t>(n), static_cast<int>(color));
    if (!(nsrc & bit(opposite(d)))) {
      errors.push_back("color " + std::to_string(color) + ": " + link(t, id, d) + " " +
                       router_name(t, static_cast<uint32_t>(n)) + " but that router does not " +
                       "take color " + std::to_string(color) + " from " +
                       dir_name(opposite(d)) + " (add it to its Src)");
    }
  }
}

// Depth-first search over the routers of one color; returns the first cycle found as a
// list of (router, direction) hops, or an empty list.
std::vector<std::pair<uint32_t, Dir>> find_cycle(const Fabric& f, unsigned color,
                                                  const std::vector<uint32_t>& nodes,
                                                  std::vector<uint8_t>& state) {
  const Topology& t = f.topology();
  enum : uint8_t { kWhite = 0, kGray = 1, kBlack = 2 };
  struct Frame {
    uint32_t id;
    DirMask remaining;
    Dir via;  // the direction taken from this router to the next frame
  };
  auto next_links = [&](uint32_t id) {
    return static_cast<DirMask>(f.route_union(id, static_cast<int>(color)).first & ~bit(kRamp));
  };
  std::vector<std::pair<uint32_t, Dir>> cycle;
  for (uint32_t start : nodes) {
    if (state[start] != kWhite) continue;
    std::vector<Frame> stack{{start, next_links(start), kRamp}};
    state[start] = kGray;
    while (!stack.empty() && cycle.empty()) {
      Frame& top = stack.back();
      if (top.remaining == 0) {
        state[top.id] = kBlack;
        stack.pop_back();
        continue;
      }
      const Dir d = first_dir(top.remaining);
      top.remaining &= static_cast<DirMask>(top.remaining - 1);
      const int r = static_cast<int>(top.id / static_cast<uint32_t>(t.cols));
      const int c = static_cast<int>(top.id % static_cast<uint32_t>(t.cols));
      const int64_t n = t.neighbour(r, c, d);
      if (n < 0) continue;
      const uint32_t nid = static_cast<uint32_t>(n);
      if (!f.router(nid).has(color)) continue;
      top.via = d;
      if (state[nid] == kGray) {  // back edge: the cycle is the stack from nid to the top
        size_t i = 0;
        while (stack[i].id != nid) ++i;
        for (; i < stack.size(); ++i) cycle.emplace_back(stack[i].id, stack[i].via);
      } else if (state[nid] == kWhite) {
        state[nid] = kGray;
        stack.push_back({nid, next_links(nid), kRamp});
      }
    }
    for (const Frame& fr : stack) state[fr.id] = kBlack;
    if (!cycle.empty()) break;
  }
  for (uint32_t id : nodes) state[id] = kWhite;
  return cycle;
}

}  // namespace

void check_routes(const Fabric& f) {
  if (f.config().packet_mode) return;
  const Topology& t = f.topology();
  const int colors = f.config().colors;
  std::vector<std::vector<uint32_t>> by_color(static_cast<size_t>(colors));
  std::vector<std::string> errors;
  for (uint32_t id = 0; id < f.router_count(); ++id) {
    const uint64_t keys = f.router(id).keys;
    if (keys == 0) continue;
    for (uint64_t m = keys; m; m &= m - 1) {
      const unsigned color = static_cast<unsigned>(std::countr_zero(m));
      by_color[color].push_back(id);
      if (errors.size() < kMaxReported) check_links(f, id, color, errors);
    }
  }
  std::vector<uint8_t> state(f.router_count(), 0);
  for (int color = 0; color < colors && errors.size() < kMaxReported; ++color) {
    const auto cycle = find_cycle(f, static_cast<unsigned>(color), by_color[color], state);
    if (cycle.empty()) continue;
    std::string s = "dependency cycle on color " + std::to_string(color) + ": ";
    for (const auto& [id, d] : cycle) s += link(t, id, d) + " ";
    s += router_name(t, cycle.front().first) +
         " (the fabric has no deadlock avoidance: routes must be free of dependent loops "
         "[0304])";
    errors.push_back(s);
  }
  if (errors.empty()) return;
  std::string msg = std::to_string(errors.size()) + (errors.size() >= kMaxReported ? "+" : "") +
                    " route problem(s):";
  for (const std::string& e : errors) msg += "\n  " + e;
  throw RouteError(msg);
}

}  // namespace wafersim::fabric
