// Plain bytes for what the domains of a split wafer swap once, outside the cycle loop (the
// parts of a deadlock report: wafer_view.hpp, watchdog.hpp): unsigned integers and strings,
// little-endian, read back in the order written. The exchange (MPI or threads, outside the
// core) moves the bytes without knowing what they hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wafersim/errors.hpp"

namespace wafersim::sim {

class ByteWriter {
 public:
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in_[at_ + i])} << (8 * i);
    at_ += 8;
    return v;
  }
  std::string str() {
    const uint64_t n = u64();
    need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  // A count of items that follow, each at least one byte: checked against what is left.
  size_t count() {
    const uint64_t n = u64();
    need(n);
    return static_cast<size_t>(n);
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(uint64_t n) const {
    if (n > in_.size() - at_) {
      throw ConfigError("a domain's deadlock report part is cut short (" +
                        std::to_string(in_.size()) + " bytes): the domains ran different builds?");
    }
  }
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace wafersim::sim
