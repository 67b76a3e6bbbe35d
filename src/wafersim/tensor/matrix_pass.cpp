#include "wafersim/tensor/matrix_pass.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "wafersim/errors.hpp"
#include "wafersim/tensor/matmul_kernel.hpp"

namespace wafersim::tensor {

namespace {

struct Tile {
  int64_t p0, o0;
  int vp, vo;      // valid positions (columns) and channels (rows)
  int chunks;      // transfers per row
  int64_t entries() const { return int64_t{vo} * chunks; }
};

struct Range {
  int32_t lo, hi;
};

Range weight_range(const MatrixArrayConfig& cfg) {
  return cfg.weight_signed ? Range{-128, 127} : Range{0, 255};
}

// The weight fed in bias cycle u for bias b: greedy chunks of the largest weight magnitude.
int32_t bias_chunk(int32_t b, int64_t u, Range r) {
  const int64_t done = b > 0 ? u * int64_t{r.hi} : u * int64_t{r.lo};
  const int64_t rest = int64_t{b} - done;
  if (b > 0) return static_cast<int32_t>(std::clamp<int64_t>(rest, 0, r.hi));
  return static_cast<int32_t>(std::clamp<int64_t>(rest, r.lo, 0));
}

std::vector<Tile> make_tiles(const MatrixArray& array, const MatmulOperands& ops) {
  std::vector<Tile> tiles;
  const int N = array.cols(), M = array.rows();
  for (int64_t p0 = 0; p0 < ops.positions; p0 += N) {
    for (int64_t o0 = 0; o0 < ops.channels; o0 += M) {
      Tile t{p0, o0, static_cast<int>(std::min<int64_t>(N, ops.positions - p0)),
             static_cast<int>(std::min<int64_t>(M, ops.channels - o0)), 0};
      t.chunks = array.chunks(t.vp);
      tiles.push_back(t);
    }
  }
  return tiles;
}

void check_operands(const MatrixArray& array, const MatmulOperands& ops) {
  const auto& cfg = array.config();
  const int64_t P = ops.positions, K = ops.depth, O = ops.channels;
  if (P < 1 || K < 1 || O < 1) {
    throw ConfigError("matrix pass needs positive shapes, got positions=" + std::to_string(P) +
                      ", depth=" + std::to_string(K) + ", channels=" + std::to_string(O));
  }
  const bool is_int = cfg.dtype == MatrixDtype::int8;
  const size_t nd = is_int ? ops.data8.size() : ops.data16.size();
  const size_t nw = is_int ? ops.weights8.size() : ops.weights16.size();
  if (static_cast<int64_t>(nd) != P * K) {
    throw ConfigError("data operand has " + std::to_string(nd) + " elements, expected positions x depth = " +
                      std::to_string(P * K));
  }
  if (static_cast<int64_t>(nw) != K * O) {
    throw ConfigError("weight operand has " + std::to_string(nw) + " elements, expected depth x channels = " +
                      std::to_string(K * O));
  }
  if (!ops.bias.empty()) {
    if (!is_int) {
      throw ConfigError(std::string("bias through the constant-1 operand [0130] is modelled for int8 "
                                    "only, not ") + dtype_name(cfg.dtype));
    }
    if (static_cast<int64_t>(ops.bias.size()) != O) {
      throw ConfigError("bias has " + std::to_string(ops.bias.size()) + " values, expected channels = " +
                        std::to_string(O));
    }
    if (!cfg.weight_signed) {
      for (int64_t o = 0; o < O; ++o) {
        if (ops.bias[o] < 0) {
          throw ConfigError("bias[" + std::to_string(o) + "] = " + std::to_string(ops.bias[o]) +
                            " is negative but the weights are unsigned");
        }
      }
    }
  }
}

// Gathers one transfer from a full result matrix (fast mode).
void gather(const std::vector<uint32_t>& result, int64_t O, const Tile& t, int row, int chunk,
            int lanes, std::vector<uint32_t>& buf) {
  std::fill(buf.begin(), buf.end(), 0u);
  const int64_t first = int64_t{chunk} * lanes;
  const int n = static_cast<int>(std::min<int64_t>(lanes, t.vp - first));
  for (int l = 0; l < n; ++l) buf[l] = result[(t.p0 + first + l) * O + t.o0 + row];
}

std::vector<uint32_t> fast_result(const MatrixArray& array, const MatmulOperands& ops) {
  const int64_t P = ops.positions, K = ops.depth, O = ops.channels;
  const auto& cfg = array.config();
  std::vector<uint32_t> result(static_cast<size_t>(P * O));
  if (cfg.dtype == MatrixDtype::int8) {
    std::vector<int16_t> a(static_cast<size_t>(P * K)), bt(static_cast<size_t>(O * K));
    for (int64_t i = 0; i < P * K; ++i) a[i] = static_cast<int16_t>(array.int_operand(ops.data8[i], cfg.data_signed));
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t o = 0; o < O; ++o) {
        bt[o * K + k] = static_cast<int16_t>(array.int_operand(ops.weights8[k * O + o], cfg.weight_signed));
      }
    }
    int32_t* out = reinterpret_cast<int32_t*>(result.data());
    const int64_t N = array.cols(), M = array.rows();
    for (int64_t p0 = 0; p0 < P; p0 += N) {
      for (int64_t o0 = 0; o0 < O; o0 += M) {
        int_tile(a.data(), bt.data(), K, p0, std::min(P, p0 + N), o0, std::min(O, o0 + M), out, O);
      }
    }
    if (!ops.bias.empty()) {
      for (int64_t p = 0; p < P; ++p) {
        for (int64_t o = 0; o < O; ++o) result[p * O + o] += static_cast<uint32_t>(ops.bias[o]);
      }
    }
  } else {
    std::vector<float> at(static_cast<size_t>(K * P)), b(static_cast<size_t>(K * O));
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t k = 0; k < K; ++k) at[k * P + p] = array.float_operand(ops.data16[p * K + k]);
    }
    for (int64_t i = 0; i < K * O; ++i) b[i] = array.float_operand(ops.weights16[i]);
    std::vector<float> out(static_cast<size_t>(P * O));
    float_tile(at.data(), b.data(), K, P, O, 0, P, 0, O, out.data(), O);
    for (int64_t i = 0; i < P * O; ++i) result[i] = std::bit_cast<uint32_t>(out[i]);
  }
  return result;
}

ArrayPassStats run_fast(MatrixArray& array, const MatmulOperands& ops, DrainSink& sink,
                        const std::vector<Tile>& tiles, int64_t keff) {
  const std::vector<uint32_t> result = fast_result(array, ops);
  const int lanes = array.config().lanes;
  std::vector<uint32_t> buf(static_cast<size_t>(lanes));
  ArrayPassStats st;
  int64_t start = 0;                                        // first MAC of the current tile
  int64_t prev_last = std::numeric_limits<int64_t>::min();  // last transfer of the previous tile
  int64_t n = 0, last = -1;
  for (const Tile& t : tiles) {
    const int64_t mac_end = start + keff;
    const int64_t capture = std::max(mac_end, prev_last);
    st.stall_drain_busy += capture - mac_end;
    int64_t x = capture + 1;
    for (int row = 0; row < t.vo; ++row) {
      for (int c = 0; c < t.chunks; ++c, ++n) {
        const int64_t room = sink.earliest(n);
        if (room > x) st.stall_consumer += room - x, x = room;
        gather(result, ops.channels, t, row, c, lanes, buf);
        sink.accept({n, t.o0 + row, t.p0 + int64_t{c} * lanes,
                     static_cast<int>(std::min<int64_t>(lanes, t.vp - int64_t{c} * lanes)), buf},
                    x);
        last = x++;
      }
    }
    prev_last = last;
    start = capture;  // the next tile's first MAC (with clear) shares the capture cycle
  }
  st.cycles = last + 1;
  st.entries = n;
  return st;
}

ArrayPassStats run_cycle(MatrixArray& array, const MatmulOperands& ops, DrainSink& sink,
                         const std::vector<Tile>& tiles, int64_t keff) {
  const auto& cfg = array.config();
  const int N = cfg.cols, M = cfg.rows, lanes = cfg.lanes;
  const int64_t K = ops.depth, O = ops.channels;
  const bool is_int = cfg.dtype == MatrixDtype::int8;
  const Range wr = weight_range(cfg);
  array.reset();
  ArrayPassStats st;
  std::vector<uint32_t> data(static_cast<size_t>(N)), weights(static_cast<size_t>(M));
  std::vector<uint32_t> buf(static_cast<size_t>(lanes));
  const int64_t T = static_cast<int64_t>(tiles.size());
  int64_t km = 0, start = 0;        // tile accumulating and its first MAC cycle
  int64_t kd = -1, cd = 0, q = 0;   // tile draining, its capture cycle, next transfer
  int64_t n = 0, last = -1;
  for (int64_t t = 0; km < T || (kd >= 0 && q < tiles[kd].entries()); ++t) {
    ArraySignals s;
    // Transfer (and shift after a row's last chunk).
    bool transfer = false;
    if (kd >= 0 && q < tiles[kd].entries() && t >= cd + 1) {
      if (sink.earliest(n) <= t) {
        transfer = true;
      } else {
        ++st.stall_consumer;
      }
    }
    int64_t q_after = q + (transfer ? 1 : 0);
    // Capture once the tile's MACs are done and the previous drain finishes this cycle.
    const bool drained = kd < 0 || q_after == tiles[kd].entries();
    if (km < T && t >= start + keff) {
      if (drained) {
        s.capture = true;
      } else {
        ++st.stall_drain_busy;
      }
    }
    if (transfer) {
      const Tile& td = tiles[kd];
      const int row = static_cast<int>(q / td.chunks), c = static_cast<int>(q % td.chunks);
      (void)row;
      std::fill(buf.begin(), buf.end(), 0u);
      const std::span<const uint32_t> r0 = array.shadow_row(0);
      const int first = c * lanes;
      const int cnt = std::min(lanes, td.vp - first);
      for (int l = 0; l < cnt; ++l) buf[l] = r0[first + l];
      sink.accept({n, td.o0 + row, td.p0 + first, cnt, buf}, t);
      last = t;
      ++n;
      s.shift = c == td.chunks - 1;
    }
    if (s.capture) {
      kd = km, cd = t, q_after = 0;
      ++km;
      start = t;
    }
    q = q_after;
    // MAC of the accumulating tile.
    if (km < T && t >= start && t < start + keff) {
      const Tile& tm = tiles[km];
      const int64_t u = t - start;
      s.enable = true;
      s.clear = u == 0;
      std::fill(data.begin(), data.end(), 0u);
      std::fill(weights.begin(), weights.end(), 0u);
      if (u < K) {
        for (int i = 0; i < tm.vp; ++i) {
          data[i] = is_int ? ops.data8[(tm.p0 + i) * K + u] : ops.data16[(tm.p0 + i) * K + u];
        }
        for (int j = 0; j < tm.vo; ++j) {
          weights[j] = is_int ? ops.weights8[u * O + tm.o0 + j] : ops.weights16[u * O + tm.o0 + j];
        }
      } else {  // bias cycle: constant 1 on the data port [0130]
        for (int i = 0; i < tm.vp; ++i) data[i] = 1;
        for (int j = 0; j < tm.vo; ++j) {
          weights[j] = static_cast<uint32_t>(bias_chunk(ops.bias[tm.o0 + j], u - K, wr)) & 0xFFu;
        }
      }
    }
    array.step(data, weights, s);
  }
  st.cycles = last + 1;
  st.entries = n;
  return st;
}

}  // namespace

int64_t bias_cycles(const MatrixArrayConfig& cfg, std::span<const int32_t> bias) {
  const Range r = weight_range(cfg);
  int64_t n = 0;
  for (int32_t b : bias) {
    const int64_t v = b;
    const int64_t c = v > 0 ? (v + r.hi - 1) / r.hi : v < 0 ? (-v + (-r.lo) - 1) / (-r.lo) : 0;
    n = std::max(n, c);
  }
  return n;
}

ArrayPassStats run_matmul_pass(MatrixArray& array, const MatmulOperands& ops, DrainSink& sink,
                               ExecMode mode) {
  check_operands(array, ops);
  const std::vector<Tile> tiles = make_tiles(array, ops);
  const int64_t nb = bias_cycles(array.config(), ops.bias);
  const int64_t keff = ops.depth + nb;
  ArrayPassStats st = mode == ExecMode::fast ? run_fast(array, ops, sink, tiles, keff)
                                             : run_cycle(array, ops, sink, tiles, keff);
  st.tiles = static_cast<int64_t>(tiles.size());
  st.bias_cycles = nb;
  st.mac_cycles = st.tiles * keff;
  for (const Tile& t : tiles) st.macs += int64_t{t.vp} * t.vo * ops.depth;
  return st;
}

MatrixSink::MatrixSink(int64_t positions, int64_t channels)
    : positions_(positions), channels_(channels),
      out_(static_cast<size_t>(positions * channels), 0u) {}

void MatrixSink::accept(const DrainedEntry& e, int64_t cycle) {
  for (int l = 0; l < e.valid; ++l) out_[(e.pos0 + l) * channels_ + e.channel] = e.values[l];
  last_ = std::max(last_, cycle);
}

}  // namespace wafersim::tensor
