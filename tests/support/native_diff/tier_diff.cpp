#include "tier_diff.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "support/compile_text.h"
#include "support/image_state.h"
#include "takt/bytecode/opcodes.h"
#include "takt/engine/program.h"
#include "takt/engine/vm_runner.h"

namespace takt::test {

namespace {

using engine::Execution;

struct Tier {
    std::unique_ptr<engine::LoadedProgram> program;
    std::unique_ptr<engine::VmRunner> runner;
};

Tier start(const CompiledText& compiled, Execution execution, std::uint64_t budget) {
    Tier t;
    t.program = std::make_unique<engine::LoadedProgram>(compiled.program.module, "");
    t.runner = std::make_unique<engine::VmRunner>(budget, execution);
    t.runner->attach(*t.program);
    return t;
}

std::string where(const engine::LoadedProgram& p, const engine::Fault& f) {
    const engine::FaultReport r = p.describe(f);
    return f.message + " at " + r.pou + ":" + std::to_string(r.line) + ":" + std::to_string(r.column) +
           " (code offset " + std::to_string(f.codeOffset) + ")";
}

// The variable holding the image byte `at`.
std::string variableAt(const bytecode::Module& m, std::size_t at) {
    for (const bytecode::VarEntry& v : m.variables) {
        if (at >= v.offset && at < std::size_t{v.offset} + v.size) {
            return v.path + " (byte " + std::to_string(at - v.offset) + " of " + std::to_string(v.size) + ")";
        }
    }
    return "no named variable";
}

// The REAL or LREAL inside a value of type `type` that holds its byte `rel`: where it starts
// (from the value's start) and its size, 0 when that byte is not part of one.
struct RealSlot {
    std::uint32_t start = 0;
    std::uint32_t size = 0;
};

RealSlot realSlot(const bytecode::Module& m, std::uint32_t type, std::uint32_t rel) {
    const bytecode::TypeDesc& t = m.types[type];
    switch (t.kind) {
    case bytecode::ValueKind::Real: return {0, 4};
    case bytecode::ValueKind::LReal: return {0, 8};
    case bytecode::ValueKind::Array: {
        const std::uint32_t stride = m.types[t.element].size;
        if (stride == 0) {
            return {};
        }
        const std::uint32_t base = rel / stride * stride;
        RealSlot s = realSlot(m, t.element, rel - base);
        s.start += base;
        return s;
    }
    default:
        for (const bytecode::FieldDesc& f : t.fields) {
            if (rel >= f.offset && rel < f.offset + m.types[f.type].size) {
                RealSlot s = realSlot(m, f.type, rel - f.offset);
                s.start += f.offset;
                return s;
            }
        }
        return {};
    }
}

bool isNan(const std::uint8_t* p, std::uint32_t size) {
    if (size == 4) {
        float f = 0;
        std::memcpy(&f, p, 4);
        return std::isnan(f);
    }
    double d = 0;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
}

// Empty when the states are equal (the stack after them is scratch: support/image_state.h).
// A REAL or LREAL that is NaN on both tiers counts as equal whatever its sign and payload bits
// (`nanBits` then says they differed): ST's comparisons and arithmetic treat every NaN alike,
// and LLVM does not keep those bits (it folds `a - -b` to `a + b`, which leaves the sign of a
// NaN from b unflipped). A value computed from a NaN that differs elsewhere (an integer) is
// still a difference.
std::string compareImages(const bytecode::Module& m, const engine::LoadedProgram& interp,
                          const engine::LoadedProgram& native, bool& nanBits) {
    const std::uint8_t* a = interp.image();
    const std::uint8_t* b = native.image();
    for (std::size_t i = 0; i < interp.stateSize(); ++i) {
        if (a[i] == b[i]) {
            continue;
        }
        bool bothNan = false;
        for (const bytecode::VarEntry& v : m.variables) {
            if (i < v.offset || i >= std::size_t{v.offset} + v.size) {
                continue;
            }
            const RealSlot s = realSlot(m, v.type, static_cast<std::uint32_t>(i - v.offset));
            const std::size_t at = v.offset + s.start;
            if (s.size != 0 && isNan(a + at, s.size) && isNan(b + at, s.size)) {
                bothNan = true;
                i = at + s.size - 1; // the rest of this value
                break;
            }
        }
        nanBits = nanBits || bothNan;
        if (!bothNan) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "image byte %zu differs: interpreter 0x%02X, native 0x%02X, in ", i, a[i],
                          b[i]);
            return buf + variableAt(m, i);
        }
    }
    return {};
}

std::vector<std::uint32_t> opcodesOf(const bytecode::Module& m) {
    std::vector<bool> seen(bytecode::kOpcodeCount);
    for (const bytecode::PouEntry& pou : m.pous) {
        if (pou.code == bytecode::kNone) {
            continue;
        }
        for (std::uint32_t pc = pou.code; pc < pou.codeEnd;
             pc += bytecode::instructionLength(static_cast<bytecode::Opcode>(m.code[pc]))) {
            seen[m.code[pc]] = true;
        }
    }
    std::vector<std::uint32_t> out;
    for (std::uint32_t op = 0; op < seen.size(); ++op) {
        if (seen[op]) {
            out.push_back(op);
        }
    }
    return out;
}

} // namespace

TierDiff compareTiers(const std::string& text, bool overflowTrap, int cycles, std::uint64_t budget) {
    TierDiff d;
    compiler::CodegenOptions options;
    options.overflowTrap = overflowTrap;
    const CompiledText compiled = compileText(text, options);
    if (!compiled.program.ok()) {
        d.compileErrors = compiled.rendered() + compiled.program.failure;
        return d;
    }
    d.compiled = true;
    const bytecode::Module& m = *compiled.program.module;
    d.opcodes = opcodesOf(m);
    Tier interp = start(compiled, Execution::Interpreter, budget);
    Tier native = start(compiled, Execution::Native, budget);
    d.status = native.runner->executionStatus();
    engine::Fault fi;
    engine::Fault fn;
    if (m.initCode != bytecode::kNone) {
        const bool okI = interp.runner->runInit(*interp.program, fi);
        const bool okN = native.runner->runInit(*native.program, fn);
        const std::string a = okI ? std::string("ok") : where(*interp.program, fi);
        const std::string b = okN ? std::string("ok") : where(*native.program, fn);
        if (a != b) {
            d.difference = "start-up code: interpreter " + a + ", native " + b;
            return d;
        }
        d.faulted = !okI;
        d.fault = okI ? "" : a;
    }
    if (d.difference = compareImages(m, *interp.program, *native.program, d.nanBits); !d.difference.empty()) {
        d.difference = "after the start-up code: " + d.difference;
        return d;
    }
    if (d.faulted) {
        return d;
    }
    const bytecode::ProgramInstance& inst = m.programs.front();
    for (int c = 0; c < cycles; ++c) {
        const std::int64_t now = std::int64_t{c} * 1'000'000;
        // Different scratch on each tier: a program that read a stack byte it had not written
        // in the same call would show as a difference in state.
        scribbleStack(*interp.program, static_cast<std::uint8_t>(0x5A + c));
        scribbleStack(*native.program, static_cast<std::uint8_t>(0xA5 - c));
        const bool okI = interp.runner->runProgram(*interp.program, inst, now, fi);
        const bool okN = native.runner->runProgram(*native.program, inst, now, fn);
        d.cyclesRun = c + 1;
        const std::string cycle = "cycle " + std::to_string(c + 1) + ": ";
        if (okI != okN) {
            d.difference = cycle + (okI ? "only the native tier faulted: " + where(*native.program, fn)
                                        : "only the interpreter faulted: " + where(*interp.program, fi));
            return d;
        }
        if (!okI) {
            const std::string a = where(*interp.program, fi);
            const std::string b = where(*native.program, fn);
            if (a != b || fi.pou != fn.pou) {
                d.difference = cycle + "different faults: interpreter " + a + ", native " + b;
                return d;
            }
            d.faulted = true;
            d.fault = a;
        }
        if (d.difference = compareImages(m, *interp.program, *native.program, d.nanBits); !d.difference.empty()) {
            d.difference = cycle + d.difference;
            return d;
        }
        if (!okI) {
            return d; // a faulted program stops, on both tiers
        }
    }
    return d;
}

} // namespace takt::test
