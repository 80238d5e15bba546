// VM dispatch cost per op class: a loop whose body repeats one instruction kUnroll times,
// run through the public Vm API; the reported ns/op divides by the instructions of the class.
#include "takt/bytecode/module.h"
#include "takt/bytecode/opcodes.h"
#include "takt/vm/debug.h"
#include "takt/vm/vm.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <vector>

namespace {

using takt::bytecode::address;
using takt::bytecode::kTagFrame;
using takt::bytecode::kTagThis;
using takt::bytecode::Opcode;

constexpr std::uint32_t kUnroll = 16;
constexpr std::int32_t kIterations = 1000;

std::uint32_t self(std::uint32_t off) {
    return address(kTagThis, off);
}
std::uint32_t fr(std::uint32_t off) {
    return address(kTagFrame, off);
}

struct Bench {
    takt::bytecode::Module module;
    std::vector<std::uint8_t> image;

    void emit(Opcode op, std::initializer_list<std::uint32_t> operands) {
        module.code.push_back(static_cast<std::uint32_t>(op));
        module.code.insert(module.code.end(), operands.begin(), operands.end());
    }

    // Main: counter at this+0; body(kUnroll times); loop kIterations times. Extra POUs follow.
    explicit Bench(const std::function<void(Bench&)>& body, const std::function<void(Bench&)>& extra = {}) {
        module.constSize = 64;
        module.globalSize = 4096;
        module.stackSize = 4096;
        takt::bytecode::TypeDesc program;
        program.kind = takt::bytecode::ValueKind::Program;
        program.size = 4096;
        module.types.push_back(program);
        emit(Opcode::MOVI_32, {self(0), 0});
        const auto top = static_cast<std::uint32_t>(module.code.size());
        for (std::uint32_t i = 0; i < kUnroll; ++i) {
            body(*this);
        }
        emit(Opcode::ADD_I32_IMM, {self(0), self(0), 1});
        emit(Opcode::JLT_I32_IMM, {self(0), static_cast<std::uint32_t>(kIterations), top});
        emit(Opcode::RET, {});
        takt::bytecode::PouEntry main;
        main.code = 0;
        main.codeEnd = static_cast<std::uint32_t>(module.code.size());
        main.frameSize = 256;
        main.instanceType = 0;
        module.pous.push_back(main);
        if (extra) {
            extra(*this);
        }
        image.assign(takt::vm::Vm::requiredImageSize(module), 0);
    }

    void run(benchmark::State& state, takt::vm::Debugger* debugger = nullptr) {
        takt::vm::Vm vm(module, image);
        vm.setDebugger(debugger);
        for (auto _ : state) {
            if (vm.runPou(0, 64) != takt::vm::Trap::None) {
                state.SkipWithError("trap");
                break;
            }
        }
        state.counters["ns/op"] = benchmark::Counter(static_cast<double>(state.iterations()) * kIterations * kUnroll,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    }
};

void BM_AddI32(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::ADD_I32, {self(8), self(8), self(12)}); });
    b.run(state);
}
BENCHMARK(BM_AddI32);

void BM_MulF64(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::MUL_F64, {self(16), self(16), self(24)}); });
    b.run(state);
}
BENCHMARK(BM_MulF64);

void BM_AddF32(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::ADD_F32, {self(8), self(8), self(12)}); });
    b.run(state);
}
BENCHMARK(BM_AddF32);

void BM_Mov32(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::MOV_32, {self(8), self(12)}); });
    b.run(state);
}
BENCHMARK(BM_Mov32);

void BM_WidenInt(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::SX_16_32, {self(8), self(12)}); });
    b.run(state);
}
BENCHMARK(BM_WidenInt);

void BM_CompareI32(benchmark::State& state) {
    Bench b([](Bench& x) { x.emit(Opcode::LT_I32, {self(4), self(8), self(12)}); });
    b.run(state);
}
BENCHMARK(BM_CompareI32);

void BM_BranchNotTaken(benchmark::State& state) {
    Bench b([](Bench& x) {
        const auto next = static_cast<std::uint32_t>(x.module.code.size()) + 3;
        x.emit(Opcode::JMP_T, {self(4), next});
    });
    b.run(state);
}
BENCHMARK(BM_BranchNotTaken);

void BM_ArrayLoad(benchmark::State& state) { // IDX + LDI_32 counted as one access
    Bench b([](Bench& x) {
        x.emit(Opcode::IDX, {fr(0), self(256), self(0), 0, 4, 1024});
        x.emit(Opcode::LDI_32, {self(8), fr(0), 0});
    });
    b.run(state);
}
BENCHMARK(BM_ArrayLoad);

void BM_CallFb(benchmark::State& state) { // user FB with an empty body: call + return
    Bench b(
        [](Bench& x) {
            x.emit(Opcode::CALL_FB, {1, self(128), 16});
        },
        [](Bench& x) {
            takt::bytecode::PouEntry fb;
            fb.kind = takt::bytecode::PouKind::FunctionBlock;
            fb.code = static_cast<std::uint32_t>(x.module.code.size());
            x.emit(Opcode::RET, {});
            fb.codeEnd = fb.code + 1;
            x.module.pous.push_back(fb);
        });
    b.run(state);
}
BENCHMARK(BM_CallFb);

void BM_CallNativeTon(benchmark::State& state) {
    Bench b(
        [](Bench& x) {
            x.emit(Opcode::CALL_FB, {1, self(128), 0});
        },
        [](Bench& x) {
            auto add = [&x](takt::bytecode::ValueKind k, std::uint32_t size) {
                takt::bytecode::TypeDesc t;
                t.kind = k;
                t.size = size;
                x.module.types.push_back(t);
                return static_cast<std::uint32_t>(x.module.types.size() - 1);
            };
            const std::uint32_t boolT = add(takt::bytecode::ValueKind::Bool, 1);
            const std::uint32_t timeT = add(takt::bytecode::ValueKind::Time, 8);
            takt::bytecode::TypeDesc ton;
            ton.kind = takt::bytecode::ValueKind::FunctionBlock;
            ton.size = 48;
            ton.fields = {{"IN", boolT, 0},         {"PT", timeT, 8},       {"Q", boolT, 16},     {"ET", timeT, 24},
                          {"StartTime", timeT, 32}, {"Running", boolT, 40}, {"PrevIn", boolT, 41}};
            x.module.types.push_back(ton);
            takt::bytecode::PouEntry pou;
            pou.kind = takt::bytecode::PouKind::Native;
            pou.instanceType = static_cast<std::uint32_t>(x.module.types.size() - 1);
            pou.native = static_cast<std::uint32_t>(takt::bytecode::Native::Ton);
            x.module.pous.push_back(pou);
        });
    b.run(state);
}
BENCHMARK(BM_CallNativeTon);

// BM_AddI32 with every ADD a statement of its own (as compiled ST marks them) and a debugger:
// /0 attached with no breakpoint (a run takes the plain loop: compare with BM_AddI32), /1 with a
// breakpoint on a statement the loop never reaches (the plain loop on the breakpoint-patched code:
// what a run costs while a breakpoint is set anywhere in the program), /2 with flow control on a
// statement the loop never reaches (the loop that looks the stop map up before each instruction,
// which steps, pauses and flow control take).
void BM_AddI32Debugger(benchmark::State& state) {
    Bench b([](Bench& x) {
        x.module.debug.push_back({static_cast<std::uint32_t>(x.module.code.size()), 0, 1, 1, true});
        x.emit(Opcode::ADD_I32, {self(8), self(8), self(12)});
    });
    const auto unreached = static_cast<std::uint32_t>(b.module.code.size());
    b.emit(Opcode::RET, {});
    b.module.debug.push_back({unreached, 0, 2, 1, true});
    b.module.files = {"bench.st"};
    takt::vm::StopMap stops(b.module);
    takt::vm::Debugger dbg(stops);
    dbg.attach();
    if (state.range(0) == 1 && !stops.setBreakpoint(unreached, true)) {
        state.SkipWithError("no statement for the breakpoint");
        return;
    }
    // Flow control on a POU the loop never runs keeps every run in the loop that looks the map up.
    takt::vm::FlowPlan plan;
    plan.pou = 1;
    plan.codeBegin = unreached;
    plan.codeEnd = unreached + 1;
    plan.statements.push_back({unreached, 0, 2, 0, 0});
    takt::vm::FlowRecorder flow(std::move(plan), takt::vm::kAnyInstance);
    if (state.range(0) == 2) {
        stops.setFlow(&flow);
    }
    b.run(state, &dbg);
    stops.setFlow(nullptr);
}
BENCHMARK(BM_AddI32Debugger)->Arg(0)->Arg(1)->Arg(2);

} // namespace
