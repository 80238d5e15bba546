#pragma once
// The five native twins by program name, for code that runs them generically.
#include <cstdint>
#include <string_view>

#include "array_struct.h"
#include "fb_calls.h"
#include "int_arith.h"
#include "real_math.h"
#include "timers_edges.h"

namespace takt::bench {

// One scan of a twin at the scan timestamp `nowNs` (only timers_edges reads the clock).
template <typename Twin> void scanTwin(Twin& twin, std::int64_t nowNs) noexcept {
    if constexpr (requires { twin.scan(nowNs); }) {
        twin.scan(nowNs);
    } else {
        (void)nowNs;
        twin.scan();
    }
}

// Calls `fn.template operator()<Twin>()` for the twin of `program`; false for an unknown name.
template <typename Fn> bool withTwin(std::string_view program, Fn&& fn) {
    if (program == "int_arith") {
        fn.template operator()<IntArith>();
    } else if (program == "real_math") {
        fn.template operator()<RealMath>();
    } else if (program == "fb_calls") {
        fn.template operator()<FbCalls>();
    } else if (program == "timers_edges") {
        fn.template operator()<TimersEdges>();
    } else if (program == "array_struct") {
        fn.template operator()<ArrayStruct>();
    } else {
        return false;
    }
    return true;
}

inline constexpr const char* kPrograms[] = {"int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"};

} // namespace takt::bench
