#pragma once
// Private to takt_vm: how native functions read STRING/WSTRING arguments from and write string
// results to their argument block (8-byte slots: a 4-byte image offset and a 4-byte capacity),
// shared by the string natives (natives_fn.cpp) and the date and time natives (natives_date.cpp).
// Every image access is checked; nothing allocates.
#include "vm_internal.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace takt::vm::text {

// A STRING (C = char) or WSTRING (C = char16_t) argument: code units up to the terminating 0
// (or the image end), never past it. WSTRING data is 2-aligned in the image (the back end lays
// it out so); a misaligned offset is refused rather than read.
template <typename C>
bool stringArg(const NativeContext& ctx, const std::uint8_t* args, int slot, std::basic_string_view<C>& out) noexcept {
    const std::uint32_t off = load<std::uint32_t>(args + 8 * slot);
    if (off == 0 || off >= ctx.imageSize || off % alignof(C) != 0) {
        return false;
    }
    const auto* p = reinterpret_cast<const C*>(ctx.image + off);
    const std::size_t max = (ctx.imageSize - off) / sizeof(C);
    std::size_t n = 0;
    while (n < max && p[n] != C{0}) {
        ++n;
    }
    out = std::basic_string_view<C>(p, n);
    return true;
}

// The result slot (slot 0: offset, capacity in code units) as a writable buffer of cap + 1 code
// units, or the trap when it is null, in the constants, misaligned or past the image.
template <typename C>
Trap resultBuffer(const NativeContext& ctx, const std::uint8_t* args, C*& dst, std::uint32_t& cap) noexcept {
    const std::uint32_t off = load<std::uint32_t>(args);
    cap = load<std::uint32_t>(args + 4);
    if (off == 0) {
        return Trap::NullReference;
    }
    if (off < ctx.constSize || off % alignof(C) != 0 ||
        static_cast<std::uint64_t>(off) + (std::uint64_t{cap} + 1) * sizeof(C) > ctx.imageSize) {
        return Trap::InvalidReference;
    }
    dst = reinterpret_cast<C*>(ctx.image + off);
    return Trap::None;
}

// Writes the concatenation of up to three pieces to the result slot, truncated to its capacity
// (in code units).
template <typename C>
Trap setString(const NativeContext& ctx, std::uint8_t* args, std::basic_string_view<C> a,
               std::basic_string_view<C> b = {}, std::basic_string_view<C> c = {}) noexcept {
    C* dst = nullptr;
    std::uint32_t cap = 0;
    if (const Trap t = resultBuffer(ctx, args, dst, cap); t != Trap::None) {
        return t;
    }
    std::size_t n = 0;
    for (std::basic_string_view<C> piece : {a, b, c}) {
        const std::size_t take = std::min<std::size_t>(piece.size(), cap - n);
        if (take == 0) {
            continue; // an empty piece may have a null data() pointer, which memmove must not see
        }
        std::memmove(dst + n, piece.data(), take * sizeof(C));
        n += take;
    }
    endString(dst, n, cap);
    return Trap::None;
}

inline Trap setString(const NativeContext& ctx, std::uint8_t* args, std::string_view a) noexcept {
    return setString<char>(ctx, args, a);
}

} // namespace takt::vm::text

namespace takt::vm {

// The date and time natives (natives_date.cpp); null for any other native.
NativeFn nativeDateFn(bytecode::Native n) noexcept;

} // namespace takt::vm
