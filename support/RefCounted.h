#pragma once
// Intrusive reference counting for immutable IR nodes: `Ref<T>` is a cheap handle, and nodes
// derive from RefCounted. Counting is atomic so handles may cross threads.

#include <atomic>
#include <cstddef>
#include <utility>

namespace dsc {

class RefCounted {
public:
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;

protected:
  RefCounted() = default;
  virtual ~RefCounted() = default;

private:
  template <typename T> friend class Ref;
  mutable std::atomic<int> refcount_{0};
};

template <typename T> class Ref {
public:
  Ref() = default;
  Ref(std::nullptr_t) {} // NOLINT(google-explicit-constructor)
  explicit Ref(const T* p) : ptr_(p) { retain(); }
  Ref(const Ref& o) : ptr_(o.ptr_) { retain(); }
  Ref(Ref&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  template <typename U> Ref(const Ref<U>& o) : ptr_(o.get()) { retain(); } // NOLINT
  ~Ref() { release(); }

  Ref& operator=(Ref o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }

  const T* get() const { return ptr_; }
  const T* operator->() const { return ptr_; }
  const T& operator*() const { return *ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool same_as(const Ref& o) const { return ptr_ == o.ptr_; }

private:
  void retain() const {
    if (ptr_) ptr_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (ptr_ && ptr_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ptr_;
    ptr_ = nullptr;
  }
  const T* ptr_ = nullptr;
};

} // namespace dsc
