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

std::string Topology::describe() const {
  std::string s = std::to_string(rows) + "x" + std::to_string(cols) + " mesh";
  if (diag_ne && diag_nw) s += "+diag";
  else if (diag_ne) s += "+diag_ne";
  else if (diag_nw) s += "+diag_nw";
  if (skip > 0) s += ", skip " + std::to_string(skip);
  if (loop) s += ", loop";
  return s;
}

}  // namespace wafersim::fabric
