#pragma once
// Replaces the global allocation functions of one test binary with malloc/free wrappers that
// count while gCounting is set, so a test can assert that a window of code never allocates.
// Include it from exactly ONE source file of a test binary (replacement functions are global).
// Every form is replaced — plain, array, nothrow and sized — so new and delete always pair up
// (a library's nothrow new released by our delete would otherwise be a mismatch under ASan).
#include <atomic>
#include <cstdlib>
#include <new>

// GCC sees operator new's malloc inlined into a caller and then free() in this operator delete,
// and calls the pair mismatched; here they are the matching implementation of both.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace takt::test {
inline std::atomic<bool> gCounting{false};
inline std::atomic<std::size_t> gAllocations{0};
inline std::atomic<std::size_t> gFrees{0}; // non-null pointers released while counting

inline void countedFree(void* p) noexcept {
    if (p != nullptr && gCounting.load(std::memory_order_relaxed)) {
        gFrees.fetch_add(1, std::memory_order_relaxed);
    }
    std::free(p);
}

inline void* countedAlloc(std::size_t n) noexcept {
    if (gCounting.load(std::memory_order_relaxed)) {
        gAllocations.fetch_add(1, std::memory_order_relaxed);
    }
    return std::malloc(n == 0 ? 1 : n);
}
} // namespace takt::test

void* operator new(std::size_t n) {
    if (void* p = takt::test::countedAlloc(n)) {
        return p;
    }
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return ::operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return takt::test::countedAlloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return takt::test::countedAlloc(n);
}
void operator delete(void* p) noexcept {
    takt::test::countedFree(p);
}
void operator delete[](void* p) noexcept {
    takt::test::countedFree(p);
}
void operator delete(void* p, std::size_t) noexcept {
    takt::test::countedFree(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    takt::test::countedFree(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    takt::test::countedFree(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    takt::test::countedFree(p);
}
