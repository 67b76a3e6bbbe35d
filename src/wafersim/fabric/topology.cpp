#include "wafersim/fabric/topology.hpp"

#include "wafersim/errors.hpp"

namespace wafersim::fabric {

namespace {
constexpr int kMaxSide = 1 << 16;
constexpr int64_t kMaxRouters = int64_t{1} << 26;  // 67 M routers: far beyond any RAM here
}  // namespace

void Topology::validate() const {
  if (rows < 1 || rows > kMaxSide) {
    throw ConfigError("rows must be in 1.." + std::to_string(kMaxSide) + ", got " +
                      std::to_string(rows));
  }
  if (cols < 1 || cols > kMaxSide) {
    throw ConfigError("cols must be in 1.." + std::to_string(kMaxSide) + ", got " +
                      std::to_string(cols));
  }
  if (size() > kMaxRouters) {
    throw ConfigError("rows * cols must be at most " + std::to_string(kMaxRouters) + ", got " +
                      std::to_string(size()));
  }
  if (skip < 0 || skip == 1) {
    throw ConfigError("skip must be 0 (no skip links) or at least 2, got " +
                      std::to_string(skip));
  }
  if (loop && rows < 2) {
    throw ConfigError("loop links need at least 2 rows, got rows=" + std::to_string(rows));
  }
  if (diag_hop_cycles != 1 && diag_hop_cycles != 2) {
    throw ConfigError("diag_hop_cycles must be 1 or 2, got " + std::to_string(diag_hop_cycles));
  }
}

const TopologyKind& topology_kind(const std::string& name) {
  std::string names;
  for (const TopologyKind& k : kTopologyKinds) {
    if (name == k.name) return k;
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  throw ConfigError("topology must be one of " + names + ", got '" + name + "'");
}

const char* Topology::kind_name() const {
  for (const TopologyKind& k : kTopologyKinds) {
    if (k.diag_ne == diag_ne && k.diag_nw == diag_nw) return k.name;
  }
  return "mesh";  // unreachable: the four kinds cover both flags
}

std::optional<std::pair<uint32_t, Dir>> Topology::edge_port(int64_t r, int64_t c) const {
  int64_t rr = 0, cc = 0;
  Dir d = kE;
  if (r >= 0 && r < rows && (c == -1 || c == cols)) {
    rr = r;
    cc = c == -1 ? 0 : cols - 1;
    d = c == -1 ? kW : kE;
  } else if (c >= 0 && c < cols && (r == -1 || r == rows)) {
    rr = r == -1 ? 0 : rows - 1;
    cc = c;
    d = r == -1 ? kS : kN;
  } else {
    return std::nullopt;
  }
  const int ri = static_cast<int>(rr), ci = static_cast<int>(cc);
  if (!is_edge(ri, ci, d)) return std::nullopt;
  return std::pair{id(ri, ci), d};
}

std::string Topology::describe() const {
  std::string s = std::to_string(rows) + "x" + std::to_string(cols) + " " + kind_name();
  if (skip > 0) s += ", skip " + std::to_string(skip);
  if (loop) s += ", loop";
  return s;
}

}  // namespace wafersim::fabric
