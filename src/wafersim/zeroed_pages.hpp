// Anonymous memory that reads as zeros and takes no room until written: the operating
// system backs it page by page on the first write. Used for per-PE and per-router arrays
// of which a run may touch only a part (PE memories, a split wafer's other rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace wafersim {

size_t page_bytes();
// `bytes` zero bytes, not resident until written; std::bad_alloc when the system refuses.
uint8_t* map_zeroed(size_t bytes);
void unmap_zeroed(uint8_t* p, size_t bytes);

// n elements of T, each starting as all-zero bytes (which must be T's default value: a
// plain struct of numbers), resident page by page as written.
template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n)
      : n_(n), data_(n ? reinterpret_cast<T*>(map_zeroed(n * sizeof(T))) : nullptr) {}
  ~ZeroedArray() { release(); }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ZeroedArray(ZeroedArray&& o) noexcept
      : n_(std::exchange(o.n_, 0)), data_(std::exchange(o.data_, nullptr)) {}
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      n_ = std::exchange(o.n_, 0);
      data_ = std::exchange(o.data_, nullptr);
    }
    return *this;
  }

  size_t size() const { return n_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  void release() {
    if (data_ != nullptr) unmap_zeroed(reinterpret_cast<uint8_t*>(data_), n_ * sizeof(T));
    data_ = nullptr;
    n_ = 0;
  }
  size_t n_ = 0;
  T* data_ = nullptr;
};

}  // namespace wafersim
