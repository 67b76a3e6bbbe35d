#include "wafersim/tensor/post_processor.hpp"

#include <algorithm>
#include <string>

#include "wafersim/errors.hpp"

namespace wafersim::tensor {

void validate(const PoolConfig& p, int64_t positions) {
  if (p.kernel < 1 || p.stride < 1) {
    throw ConfigError("pooling kernel and stride must be >= 1, got kernel=" +
                      std::to_string(p.kernel) + ", stride=" + std::to_string(p.stride));
  }
  if (p.height < 1 || p.width < 1 || p.height * p.width != positions) {
    throw ConfigError("pooling extent " + std::to_string(p.height) + " x " + std::to_string(p.width) +
                      " does not cover the " + std::to_string(positions) + " positions of the map");
  }
  if (p.kernel > p.height || p.kernel > p.width) {
    throw ConfigError("pooling kernel " + std::to_string(p.kernel) + " exceeds the extent " +
                      std::to_string(p.height) + " x " + std::to_string(p.width));
  }
}

std::vector<uint8_t> max_pool(std::span<const uint8_t> map, int64_t channels, const PoolConfig& p) {
  validate(p, p.height * p.width);
  if (static_cast<int64_t>(map.size()) != channels * p.height * p.width) {
    throw ConfigError("max_pool map has " + std::to_string(map.size()) + " bytes, expected " +
                      std::to_string(channels * p.height * p.width));
  }
  const int64_t hp = p.pooled_height(), wp = p.pooled_width();
  std::vector<uint8_t> out(static_cast<size_t>(channels * hp * wp));
  for (int64_t c = 0; c < channels; ++c) {
    const uint8_t* m = map.data() + c * p.height * p.width;
    for (int64_t y = 0; y < hp; ++y) {
      for (int64_t x = 0; x < wp; ++x) {
        uint8_t best = 0;
        for (int dy = 0; dy < p.kernel; ++dy) {
          for (int dx = 0; dx < p.kernel; ++dx) {
            best = std::max(best, m[(y * p.stride + dy) * p.width + x * p.stride + dx]);
          }
        }
        out[(c * hp + y) * wp + x] = best;
      }
    }
  }
  return out;
}

void PostProcessor::configure(int64_t channels, const PoolConfig& pool) {
  if (channels < 1) throw ConfigError("post-processor needs >= 1 channel, got " + std::to_string(channels));
  validate(pool, pool.height * pool.width);
  channels_ = channels;
  pool_ = pool;
  map_.assign(static_cast<size_t>(channels * pool.height * pool.width), 0);
  rows_ = 0;
}

void PostProcessor::accept(int64_t channel, int64_t pos0, int valid, std::span<const uint8_t> bytes) {
  const int64_t positions = pool_.height * pool_.width;
  if (channel < 0 || channel >= channels_ || pos0 < 0 || pos0 + valid > positions ||
      valid > static_cast<int>(bytes.size())) {
    internal_error("post-processor row outside its map");
  }
  std::copy(bytes.begin(), bytes.begin() + valid, map_.begin() + channel * positions + pos0);
  ++rows_;
}

int64_t PostProcessor::output_bytes() const {
  return channels_ * pool_.pooled_height() * pool_.pooled_width();
}

int64_t PostProcessor::finish(std::span<uint8_t> dst) {
  const std::vector<uint8_t> out = max_pool(map_, channels_, pool_);
  if (dst.size() != out.size()) {
    throw ConfigError("post-processor output needs " + std::to_string(out.size()) +
                      " bytes of memory, got " + std::to_string(dst.size()));
  }
  std::copy(out.begin(), out.end(), dst.begin());
  return (static_cast<int64_t>(out.size()) + lanes_ - 1) / lanes_;
}

}  // namespace wafersim::tensor
