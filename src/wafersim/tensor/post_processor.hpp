// The post-processing unit of seed 002 ([0030], [0033], [0070]): receives the vector engine's
// 1-byte-per-lane output rows, assembles them into a channels x height x width feature map,
// max-pools it with a square kernel and stride over the spatial extent, and writes the
// result to memory. The seed names max pooling configured by kernel size, stride and spatial
// extent and nothing more; everything else here is wafersim's choice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wafersim::tensor {

struct PoolConfig {
  int kernel = 1;  // 1 x 1 with stride 1 writes the map unchanged
  int stride = 1;
  int64_t height = 0;  // spatial extent of the incoming map
  int64_t width = 0;
  int64_t pooled_height() const { return (height - kernel) / stride + 1; }
  int64_t pooled_width() const { return (width - kernel) / stride + 1; }
};

// Max pooling of a channels x height x width uint8 map; returns channels x Hp x Wp.
std::vector<uint8_t> max_pool(std::span<const uint8_t> map, int64_t channels, const PoolConfig& p);
void validate(const PoolConfig& p, int64_t positions);

class PostProcessor {
 public:
  explicit PostProcessor(int lanes) : lanes_(lanes) {}

  // PP.CFG: a new map of `channels` x pool.height x pool.width.
  void configure(int64_t channels, const PoolConfig& pool);
  // One output-buffer row: channel `channel`, positions [pos0, pos0 + valid).
  void accept(int64_t channel, int64_t pos0, int valid, std::span<const uint8_t> bytes);
  int64_t rows_received() const { return rows_; }
  // PP.MAXPOOL + PP.WRITE: pools and writes channels x Hp x Wp bytes to dst; returns the
  // write cycles (one lanes-byte word per cycle).
  int64_t finish(std::span<uint8_t> dst);
  int64_t output_bytes() const;

 private:
  int lanes_;
  int64_t channels_ = 0;
  PoolConfig pool_;
  std::vector<uint8_t> map_;
  int64_t rows_ = 0;
};

}  // namespace wafersim::tensor
