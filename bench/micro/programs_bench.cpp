// The five benchmark programs (bench/programs/*.st) side by side: BM_St compiles the ST once and
// runs it scan by scan on the VM's interpreter with a virtual clock, BM_Tier the same on the
// native execution tier (its label says whether the program runs native or why it fell back to
// the interpreter), BM_Native runs the hand-written C++ twin (bench/native), BM_Lua the same work
// in Lua 5.4 through the C API (bench/lua). Time per iteration is time per scan; each case
// reports its `check` after the run so the twins can be compared. scripts/bench.sh turns
// repetitions into the median ratios against the twin.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#if TAKT_HAVE_LUA
#include <lua.hpp>
#endif

#include "../native/st_program.h"
#include "../native/twins.h"

namespace {

using takt::bench::StProgram;

std::string stPath(const std::string& program) {
    return std::string(TAKT_SOURCE_DIR) + "/bench/programs/" + program + ".st";
}

std::string luaPath(const std::string& program) {
    return std::string(TAKT_SOURCE_DIR) + "/bench/lua/" + program + ".lua";
}

void bmSt(benchmark::State& state, const std::string& program, takt::engine::Execution execution) {
    StProgram st;
    std::string error;
    if (!st.load(stPath(program), error, execution)) {
        state.SkipWithError(error.c_str());
        return;
    }
    if (execution == takt::engine::Execution::Native) {
        // The same label in every repetition, so the aggregates keep it.
        state.SetLabel(st.executionStatus());
        state.counters["compile_ms"] = st.nativeCompileMs();
    }
    for (auto _ : state) {
        if (!st.scan()) {
            state.SkipWithError(st.faultMessage().c_str());
            return;
        }
    }
    double check = 0.0;
    (void)st.readLreal("check", check);
    state.counters["check"] = check;
}

void bmNative(benchmark::State& state, const std::string& program) {
    takt::bench::withTwin(program, [&]<typename Twin>() {
        Twin twin;
        std::int64_t now = 0;
        for (auto _ : state) {
            takt::bench::scanTwin(twin, now);
            benchmark::DoNotOptimize(twin);
            benchmark::ClobberMemory();
            now += StProgram::kScanNs;
        }
        state.counters["check"] = twin.check;
    });
}

#if TAKT_HAVE_LUA
void bmLua(benchmark::State& state, const std::string& program) {
    lua_State* lua = luaL_newstate();
    luaL_openlibs(lua);
    if (luaL_dofile(lua, luaPath(program).c_str()) != LUA_OK) {
        state.SkipWithError(lua_tostring(lua, -1));
        lua_close(lua);
        return;
    }
    lua_getglobal(lua, "scan");
    const int scanRef = luaL_ref(lua, LUA_REGISTRYINDEX);
    lua_Integer now = 0;
    for (auto _ : state) {
        lua_rawgeti(lua, LUA_REGISTRYINDEX, scanRef);
        lua_pushinteger(lua, now);
        if (lua_pcall(lua, 1, 0, 0) != LUA_OK) {
            state.SkipWithError(lua_tostring(lua, -1));
            break;
        }
        now += StProgram::kScanNs;
    }
    lua_getglobal(lua, "result");
    if (lua_pcall(lua, 0, 1, 0) == LUA_OK) {
        state.counters["check"] = lua_tonumber(lua, -1);
    }
    lua_close(lua);
}
#endif

// Registered at start-up so the variants of each program sit next to each other.
const bool kRegistered = [] {
    for (const char* program : takt::bench::kPrograms) {
        const std::string name(program);
        benchmark::RegisterBenchmark(("BM_St/" + name).c_str(), bmSt, name, takt::engine::Execution::Interpreter);
        benchmark::RegisterBenchmark(("BM_Tier/" + name).c_str(), bmSt, name, takt::engine::Execution::Native);
        benchmark::RegisterBenchmark(("BM_Native/" + name).c_str(), bmNative, name);
#if TAKT_HAVE_LUA
        benchmark::RegisterBenchmark(("BM_Lua/" + name).c_str(), bmLua, name);
#endif
    }
    return true;
}();

} // namespace
