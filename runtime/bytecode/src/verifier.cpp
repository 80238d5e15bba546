// The load-time verifier (rules in verifier.h). Operand checks are driven by kOpcodeInfo, which
// opcodes.h generates from opcodes.def.
#include "takt/bytecode/verifier.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/value_compare.h"

namespace takt::bytecode {

namespace {

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

constexpr std::uint64_t kAddressSpace = std::uint64_t{kOffsetMask} + 1;

// Where an operand is ("POU 'P' at 0x1c: ADD_I32 operand 2"), for a message. The text is only
// built when a check fails: formatting it for every operand of every instruction was most of
// the verifier's time on large programs.
struct OperandSite {
    const std::string& pou;
    std::uint32_t pc;
    std::string_view op;
    unsigned operand;

    [[nodiscard]] std::string text() const {
        return "POU '" + pou + "' at " + hex(pc) + ": " + std::string(op) + " operand " + std::to_string(operand);
    }
};

std::string operator+(const OperandSite& site, const char* rest) {
    return site.text() + rest;
}

class Verifier {
public:
    explicit Verifier(const Module& m) : m_(m), globalsEnd_(std::uint64_t{m.constSize} + m.globalSize) {}

    VerifyResult run() {
        if (checkImage() && checkTypes() && checkPous() && checkCode() && checkInitCode() && checkPrograms() &&
            checkTasks() && checkVariables() && checkIo() && checkAccess() && checkDebug()) {
            return {};
        }
        return result_;
    }

private:
    bool fail(VerifyError code, std::string message) {
        result_.code = code;
        result_.message = std::move(message);
        return false;
    }

    [[nodiscard]] bool typeOk(std::uint32_t t) const { return t < m_.types.size(); }
    [[nodiscard]] bool inGlobals(std::uint64_t offset, std::uint64_t size) const {
        return offset + size <= globalsEnd_;
    }
    [[nodiscard]] std::uint64_t instanceSize(const PouEntry& p) const {
        return typeOk(p.instanceType) ? m_.types[p.instanceType].size : 0;
    }

    bool checkImage() {
        if (m_.initImage.size() != globalsEnd_) {
            return fail(VerifyError::ImageLayout, "initial image has " + std::to_string(m_.initImage.size()) +
                                                      " bytes, constSize + globalSize is " +
                                                      std::to_string(globalsEnd_));
        }
        if (globalsEnd_ + m_.stackSize > kAddressSpace) {
            return fail(VerifyError::ImageLayout, "data image of " + std::to_string(globalsEnd_ + m_.stackSize) +
                                                      " bytes exceeds the 30-bit address space");
        }
        return true;
    }

    bool checkTypes() {
        for (std::size_t i = 0; i < m_.types.size(); ++i) {
            const TypeDesc& t = m_.types[i];
            std::string where = "type " + std::to_string(i) + " '" + t.name + "'";
            if (t.element != kNone && !typeOk(t.element)) {
                return fail(VerifyError::TypeTable,
                            where + ": element type " + std::to_string(t.element) + " is not in the type table");
            }
            if (t.pou != kNone && t.pou >= m_.pous.size()) {
                return fail(VerifyError::TypeTable, where + ": POU " + std::to_string(t.pou) + " out of range");
            }
            for (const FieldDesc& f : t.fields) {
                if (!typeOk(f.type)) {
                    return fail(VerifyError::TypeTable, where + ": field '" + f.name + "' has type " +
                                                            std::to_string(f.type) + " not in the type table");
                }
                if (std::uint64_t{f.offset} + m_.types[f.type].size > t.size) {
                    return fail(VerifyError::TypeTable, where + ": field '" + f.name + "' at offset " +
                                                            std::to_string(f.offset) + " leaves the type (size " +
                                                            std::to_string(t.size) + ")");
                }
            }
        }
        return true;
    }

    bool checkPous() {
        for (std::size_t i = 0; i < m_.pous.size(); ++i) {
            const PouEntry& p = m_.pous[i];
            std::string where = "POU " + std::to_string(i) + " '" + p.name + "'";
            if (p.instanceType != kNone && !typeOk(p.instanceType)) {
                return fail(VerifyError::PouTable,
                            where + ": instance type " + std::to_string(p.instanceType) + " is not in the type table");
            }
            if (p.native != kNone && (p.native >= kNativeCount || kNativeInfo[p.native].kind != NativeKind::Fb)) {
                return fail(VerifyError::PouTable,
                            where + ": native " + std::to_string(p.native) + " is not a native function block");
            }
            if (p.native != kNone && !typeOk(p.instanceType)) {
                return fail(VerifyError::PouTable, where + ": native function block without an instance type");
            }
            if (p.frameSize > m_.stackSize) {
                return fail(VerifyError::PouTable, where + ": frame of " + std::to_string(p.frameSize) +
                                                       " bytes does not fit the stack of " +
                                                       std::to_string(m_.stackSize));
            }
            for (const FrameVar& v : p.frame) {
                // What the debugger reads and writes in a halted frame must be the frame's.
                if (!typeOk(v.type) || (v.kind != VarKind::Input && v.kind != VarKind::Output &&
                                        v.kind != VarKind::InOut && v.kind != VarKind::Temp)) {
                    return fail(VerifyError::PouTable,
                                where + ": frame variable '" + v.name + "' has no valid type or kind");
                }
                if (std::uint64_t{v.offset} + m_.types[v.type].size > p.frameSize) {
                    return fail(VerifyError::PouTable, where + ": frame variable '" + v.name + "' at offset " +
                                                           std::to_string(v.offset) + " leaves the frame of " +
                                                           std::to_string(p.frameSize) + " bytes");
                }
            }
            if (p.code == kNone) {
                if (p.native == kNone && p.kind != PouKind::Native) {
                    return fail(VerifyError::PouTable, where + ": has neither code nor a native implementation");
                }
                continue;
            }
            if (p.code >= p.codeEnd || p.codeEnd > m_.code.size()) {
                return fail(VerifyError::PouTable, where + ": code range [" + hex(p.code) + ", " + hex(p.codeEnd) +
                                                       ") is empty or outside the code (" +
                                                       std::to_string(m_.code.size()) + " words)");
            }
        }
        return true;
    }

    // A data operand: the space its tag selects and the byte range it covers.
    bool checkData(const PouEntry& pou, std::uint32_t word, std::uint64_t width, bool write, const OperandSite& at) {
        std::uint32_t tag = addressTag(word);
        std::uint64_t offset = addressOffset(word);
        std::uint64_t limit = 0;
        std::string_view space;
        switch (tag) {
        case kTagAbsolute:
            limit = globalsEnd_;
            space = "constants + globals";
            if (write && offset < m_.constSize) {
                return fail(VerifyError::ConstantWrite,
                            at + ": destination g:" + hex(offset) + " lies in the read-only constants");
            }
            break;
        case kTagThis:
            if (!typeOk(pou.instanceType)) {
                return fail(VerifyError::OperandTag,
                            at + ": this+" + std::to_string(offset) + " in a POU without an instance");
            }
            limit = instanceSize(pou);
            space = "the instance";
            break;
        case kTagFrame:
            limit = pou.frameSize;
            space = "the frame";
            break;
        default: return fail(VerifyError::OperandTag, at + ": address word " + hex(word) + " has the reserved tag 3");
        }
        if (offset + width > limit) {
            return fail(VerifyError::OperandRange, at + ": operand [" + hex(offset) + ", +" + std::to_string(width) +
                                                       ") is outside " + std::string(space) + " (" +
                                                       std::to_string(limit) + " bytes)");
        }
        return true;
    }

    // Extent in bytes of a width-0 data operand (see verifier.h).
    std::uint64_t openExtent(const OpcodeInfo& info, std::uint32_t pc) const {
        if (static_cast<Opcode>(m_.code[pc]) == Opcode::EQ_AGG) {
            // Both values cover their type (i, checked with the immediates).
            const std::uint32_t type = m_.code[pc + 4];
            return typeOk(type) ? std::max<std::uint64_t>(m_.types[type].size, 1) : 1;
        }
        for (std::uint8_t k = 0; k < info.operandCount; ++k) {
            std::uint32_t w = m_.code[pc + 1 + info.operands[k].word];
            if (info.operands[k].kind == OperandKind::Pou) {
                return w < m_.pous.size() ? instanceSize(m_.pous[w]) : 0;
            }
            if (info.operands[k].kind == OperandKind::Native) {
                return 8ull * nativeSlotCount(w);
            }
        }
        for (std::uint8_t k = 0; k < info.operandCount; ++k) {
            if (info.operands[k].kind == OperandKind::Count) {
                return std::max<std::uint64_t>(m_.code[pc + 1 + info.operands[k].word], 1);
            }
        }
        return 1; // only the start is known statically; the VM bounds the rest at run time
    }

    // The array operand of a fused element access (LDX_*, STX_*, ADDX_*): every element the bounds
    // check lets through must lie inside it, so it covers (c2 - 1) * c1 bytes plus the access
    // (the operand may start at a field inside the first element). 0 for any other operand.
    std::uint64_t elementExtent(Opcode op, std::uint8_t k, std::uint32_t pc) const {
        std::uint64_t access = 0;
        switch (op) {
        case Opcode::LDX_8:
        case Opcode::LDX_S8:
        case Opcode::LDX_U8:
        case Opcode::STX_8: access = 1; break;
        case Opcode::LDX_16:
        case Opcode::LDX_S16:
        case Opcode::LDX_U16:
        case Opcode::STX_16: access = 2; break;
        case Opcode::LDX_32:
        case Opcode::STX_32:
        case Opcode::ADDX_I32:
        case Opcode::ADDX_F32: access = 4; break;
        case Opcode::LDX_64:
        case Opcode::STX_64:
        case Opcode::ADDX_F64: access = 8; break;
        case Opcode::LDX_N:
        case Opcode::STX_N: break;
        default: return 0;
        }
        // Words after the opcode: the loaded or stored value, the array, the index, the lower
        // bound, c1 and c2.
        if (k != 1) {
            return 0;
        }
        const std::uint64_t size = m_.code[pc + 5];
        const std::uint64_t count = m_.code[pc + 6];
        if (access == 0) { // _N: the whole element
            access = std::max<std::uint64_t>(size, 1);
        }
        return (std::max<std::uint64_t>(count, 1) - 1) * size + access;
    }

    bool checkInstruction(std::size_t pouIndex, std::uint32_t pc, const std::vector<bool>& boundary) {
        const PouEntry& pou = m_.pous[pouIndex];
        auto op = static_cast<Opcode>(m_.code[pc]);
        const OpcodeInfo& info = opcodeInfo(op);
        for (std::uint8_t k = 0; k < info.operandCount; ++k) {
            const OperandInfo& operand = info.operands[k];
            std::uint32_t w = m_.code[pc + 1 + operand.word];
            const OperandSite at{pou.name, pc, info.name, k + 1u};
            switch (operand.kind) {
            case OperandKind::Dest:
            case OperandKind::Source: {
                std::uint64_t width = operand.width != 0 ? operand.width : openExtent(info, pc);
                if (const std::uint64_t extent = elementExtent(op, k, pc); extent != 0) {
                    width = extent;
                }
                if (!checkData(pou, w, width, operand.kind == OperandKind::Dest, at)) {
                    return false;
                }
                break;
            }
            case OperandKind::Jump:
                if (w < pou.code || w >= pou.codeEnd || !boundary[w - pou.code]) {
                    return fail(VerifyError::JumpTarget,
                                at + ": jump target " + hex(w) + " is not an instruction of '" + pou.name + "'");
                }
                // A FOR back-edge jumps backwards: the VM counts the watchdog on it unconditionally.
                if (isLoopBackEdge(op) && w > pc) {
                    return fail(VerifyError::JumpTarget, at + ": loop target " + hex(w) + " is not a backward jump");
                }
                break;
            case OperandKind::Pou: {
                if (w >= m_.pous.size()) {
                    return fail(VerifyError::PouIndex, at + ": POU index " + std::to_string(w) + " out of range (" +
                                                           std::to_string(m_.pous.size()) + " POUs)");
                }
                const PouEntry& callee = m_.pous[w];
                // Calls with an instance need one to pass; the rest of a call's safety (frame
                // placement, depth) is checked by the VM when it enters the callee.
                if (info.operands[0].kind == OperandKind::Pou && k == 0 && op != Opcode::CALL_FN &&
                    !typeOk(callee.instanceType)) {
                    return fail(VerifyError::PouIndex, at + ": POU '" + callee.name + "' has no instance to call with");
                }
                break;
            }
            case OperandKind::Native:
                if (w >= kNativeCount || kNativeInfo[w].kind != NativeKind::Fn) {
                    return fail(VerifyError::NativeIndex,
                                at + ": native " + std::to_string(w) + " is not a native function");
                }
                break;
            case OperandKind::Imm32:
                if ((op == Opcode::MATH_F32 || op == Opcode::MATH_F64) && w >= kMathFnCount) {
                    return fail(VerifyError::Immediate,
                                at + ": math function selector " + std::to_string(w) + " out of range");
                }
                if (!checkLoopStep(op, k, w, at) || !checkCompareType(op, k, w, at)) {
                    return false;
                }
                break;
            case OperandKind::Imm64:
                if (!checkDivisor(op, pc, k, at)) {
                    return false;
                }
                break;
            case OperandKind::Count:
                // CHK_PTR tests alignment with a mask: c1 must be a power of two.
                if (op == Opcode::CHK_PTR && k == 1 && (w == 0 || (w & (w - 1)) != 0)) {
                    return fail(VerifyError::Immediate,
                                at + ": pointer alignment " + std::to_string(w) + " is not a power of two");
                }
                break;
            }
        }
        return true;
    }

    static bool isLoopBackEdge(Opcode op) {
        switch (op) {
        case Opcode::LOOP_I32_IMM:
        case Opcode::LOOP_DN_I32_IMM:
        case Opcode::LOOP_I32:
        case Opcode::LOOP_DN_I32:
        case Opcode::LOOP_STEP_I32:
        case Opcode::LOOP_STEP_I64:
        case Opcode::LOOP_I16_IMM:
        case Opcode::LOOP_DN_I16_IMM: return true;
        default: return false;
        }
    }

    // FOR back-edges with an immediate step: the direction is part of the instruction, so the
    // step must point that way (its sign is what keeps counter + step from passing the bound).
    bool checkLoopStep(Opcode op, std::uint8_t k, std::uint32_t w, const OperandSite& at) {
        const bool up = op == Opcode::LOOP_I32_IMM || op == Opcode::LOOP_I32 || op == Opcode::LOOP_I16_IMM;
        const bool down = op == Opcode::LOOP_DN_I32_IMM || op == Opcode::LOOP_DN_I32 || op == Opcode::LOOP_DN_I16_IMM;
        const std::uint8_t stepOperand = op == Opcode::LOOP_I16_IMM || op == Opcode::LOOP_DN_I16_IMM ? 3 : 2;
        if ((!up && !down) || k != stepOperand) {
            return true;
        }
        const auto step = static_cast<std::int32_t>(w);
        if (up ? step <= 0 : step >= 0) {
            return fail(VerifyError::Immediate, at + ": step " + std::to_string(step) + " must be " +
                                                    (up ? "positive" : "negative") + " for the instruction");
        }
        return true;
    }

    // EQ_AGG walks its values by the type i; ASSERT_FAIL names one for `takt test` to walk in
    // its Value format. Either needs a type whose sizes and offsets keep the walk inside the
    // values and whose nesting bounds its recursion.
    bool checkCompareType(Opcode op, std::uint8_t k, std::uint32_t w, const OperandSite& at) {
        std::uint32_t type = w;
        if (op == Opcode::ASSERT_FAIL && k == 3) {
            const std::uint32_t format = w & kAssertFormatMask;
            if (format >= kAssertFormatCount) {
                return fail(VerifyError::Immediate,
                            at + ": assertion format " + std::to_string(format) + " out of range");
            }
            if (format != static_cast<std::uint32_t>(AssertFormat::Value)) {
                return true;
            }
            type = w >> kAssertTypeShift;
        } else if (op != Opcode::EQ_AGG) {
            return true;
        }
        if (const std::string why = compareTypeError(m_, type, compareMemo_); !why.empty()) {
            return fail(VerifyError::Immediate, at + ": values of " + why);
        }
        return true;
    }

    // DIV/MOD by a constant: the divisor is one the instruction handles (no zero, no -1 or 1
    // for a division) and the reciprocal is the one for it, so the result is the exact quotient.
    // The divisor is the immediate just before the reciprocal (operand k).
    bool checkDivisor(Opcode op, std::uint32_t pc, std::uint8_t k, const OperandSite& at) {
        const bool div = op == Opcode::DIV_I32_IMM || op == Opcode::DIV_U32_IMM;
        const bool isSigned = op == Opcode::DIV_I32_IMM; // the MOD forms take the magnitude
        if (!div && op != Opcode::MOD_I32_IMM && op != Opcode::MOD_U32_IMM && op != Opcode::ADDMOD_I32_IMM &&
            op != Opcode::ADDMOD_U32_IMM) {
            return true;
        }
        const std::uint32_t at0 = pc + 1 + opcodeInfo(op).operands[k].word;
        const std::uint32_t word = m_.code[at0 - 1];
        const std::uint32_t mag = isSigned ? divisorMagnitude(static_cast<std::int32_t>(word)) : word;
        const std::uint64_t r = std::uint64_t{m_.code[at0]} | (std::uint64_t{m_.code[at0 + 1]} << 32);
        if (mag == 0 || (div && mag == 1) || r != divisorReciprocal(mag)) {
            return fail(VerifyError::Immediate, at + ": divisor " + std::to_string(word) +
                                                    " or its reciprocal is not valid for the instruction");
        }
        return true;
    }

    bool checkCode() {
        for (std::size_t i = 0; i < m_.pous.size(); ++i) {
            const PouEntry& p = m_.pous[i];
            if (p.code == kNone) {
                continue;
            }
            // Pass 1: instruction boundaries; pass 2: operands (jumps need every boundary).
            std::vector<bool> boundary(p.codeEnd - p.code, false);
            std::uint32_t last = p.code;
            for (std::uint32_t pc = p.code; pc < p.codeEnd;) {
                std::uint32_t word = m_.code[pc];
                if (word >= kOpcodeCount) {
                    return fail(VerifyError::UnknownOpcode,
                                "POU '" + p.name + "' at " + hex(pc) + ": unknown opcode " + std::to_string(word));
                }
                std::uint32_t len = kOpcodeInfo[word].length;
                if (p.codeEnd - pc < len) {
                    return fail(VerifyError::TruncatedInstr, "POU '" + p.name + "' at " + hex(pc) + ": " +
                                                                 std::string(kOpcodeInfo[word].name) +
                                                                 " runs past the end of the POU");
                }
                boundary[pc - p.code] = true;
                last = pc;
                pc += len;
            }
            auto lastOp = static_cast<Opcode>(m_.code[last]);
            if (lastOp != Opcode::RET && lastOp != Opcode::JMP && lastOp != Opcode::TRAP) {
                return fail(VerifyError::FallsThrough, "POU '" + p.name + "' at " + hex(last) + ": ends with " +
                                                           std::string(opcodeName(lastOp)) +
                                                           ", which can continue past the end of the POU");
            }
            for (std::uint32_t pc = p.code; pc < p.codeEnd; pc += instructionLength(static_cast<Opcode>(m_.code[pc]))) {
                if (!checkInstruction(i, pc, boundary)) {
                    return false;
                }
            }
        }
        return true;
    }

    bool checkInitCode() {
        if (m_.initCode == kNone) {
            return true;
        }
        // The VM runs initCode with this = 0 and the frame at the stack base: it must be the
        // entry of a POU whose operands were checked against exactly that.
        for (const PouEntry& p : m_.pous) {
            if (p.code == m_.initCode && p.native == kNone && !typeOk(p.instanceType)) {
                return true;
            }
        }
        return fail(VerifyError::InitCode,
                    "initCode " + hex(m_.initCode) + " is not the entry of a POU without an instance");
    }

    bool checkPrograms() {
        for (const ProgramInstance& inst : m_.programs) {
            std::string where = "program instance '" + inst.name + "'";
            if (inst.pou >= m_.pous.size()) {
                return fail(VerifyError::ProgramInstance,
                            where + ": POU " + std::to_string(inst.pou) + " out of range");
            }
            const PouEntry& p = m_.pous[inst.pou];
            if (p.code == kNone || !typeOk(p.instanceType)) {
                return fail(VerifyError::ProgramInstance, where + ": POU '" + p.name + "' is not a program with code");
            }
            if (inst.offset < m_.constSize || !inGlobals(inst.offset, instanceSize(p))) {
                return fail(VerifyError::ProgramInstance, where + ": instance at " + hex(inst.offset) + " (+" +
                                                              std::to_string(instanceSize(p)) +
                                                              ") is outside the globals");
            }
            if (inst.task != kNone && inst.task >= m_.tasks.size()) {
                return fail(VerifyError::ProgramInstance,
                            where + ": task " + std::to_string(inst.task) + " out of range");
            }
        }
        return true;
    }

    bool checkTasks() {
        for (const TaskEntry& t : m_.tasks) {
            if (t.singleOffset != kNone && (t.singleOffset < m_.constSize || !inGlobals(t.singleOffset, 1))) {
                return fail(VerifyError::TaskTable, "task '" + t.name + "': SINGLE input at " + hex(t.singleOffset) +
                                                        " is outside the globals");
            }
            if (t.intervalNs < 0) {
                return fail(VerifyError::TaskTable, "task '" + t.name + "': negative interval");
            }
            for (std::size_t i = 0; i < t.io.size(); ++i) {
                if (t.io[i] >= m_.io.size() || (i > 0 && t.io[i] <= t.io[i - 1])) {
                    return fail(VerifyError::TaskTable, "task '" + t.name + "': I/O index " + std::to_string(t.io[i]) +
                                                            " is out of range or out of order");
                }
            }
        }
        return true;
    }

    bool checkVariables() {
        for (const VarEntry& v : m_.variables) {
            if (!typeOk(v.type)) {
                return fail(VerifyError::VariableTable,
                            "variable '" + v.path + "': type " + std::to_string(v.type) + " is not in the type table");
            }
            // Frame variables (FUNCTION temporaries) have frame offsets; everything else lives
            // in the constants and globals.
            if (v.kind != VarKind::Temp && v.kind != VarKind::InOut && !inGlobals(v.offset, v.size)) {
                return fail(VerifyError::VariableTable, "variable '" + v.path + "' at " + hex(v.offset) + " (+" +
                                                            std::to_string(v.size) + ") is outside the image");
            }
        }
        return true;
    }

    bool checkIo() {
        for (const IoBinding& b : m_.io) {
            if (!typeOk(b.type)) {
                return fail(VerifyError::IoTable, "I/O binding " + b.address + ": type " + std::to_string(b.type) +
                                                      " is not in the type table");
            }
            if (b.imageOffset < m_.constSize || !inGlobals(b.imageOffset, std::max<std::uint32_t>(b.size, 1)) ||
                b.bit > 7) {
                return fail(VerifyError::IoTable, "I/O binding " + b.address + " of '" + b.path + "' at " +
                                                      hex(b.imageOffset) + " is outside the globals");
            }
        }
        return true;
    }

    bool checkAccess() {
        for (const AccessEntry& a : m_.access) {
            if (!typeOk(a.type)) {
                return fail(VerifyError::AccessTable, "VAR_ACCESS '" + a.name + "': type " + std::to_string(a.type) +
                                                          " is not in the type table");
            }
            if (!inGlobals(a.offset, m_.types[a.type].size)) {
                return fail(VerifyError::AccessTable,
                            "VAR_ACCESS '" + a.name + "' at " + hex(a.offset) + " is outside the image");
            }
        }
        return true;
    }

    bool checkDebug() {
        for (std::size_t i = 0; i < m_.debug.size(); ++i) {
            const DebugEntry& d = m_.debug[i];
            if (i > 0 && d.codeOffset < m_.debug[i - 1].codeOffset) {
                return fail(VerifyError::DebugTable,
                            "debug entry " + std::to_string(i) + " at code " + hex(d.codeOffset) + " is out of order");
            }
            if (d.codeOffset >= m_.code.size() || d.file >= m_.files.size()) {
                return fail(VerifyError::DebugTable, "debug entry " + std::to_string(i) + " (code " +
                                                         hex(d.codeOffset) + ", file " + std::to_string(d.file) +
                                                         ") points outside the code or the file list");
            }
        }
        return true;
    }

    const Module& m_;
    std::vector<std::int32_t> compareMemo_; // compareTypeError's findings per type
    std::uint64_t globalsEnd_;
    VerifyResult result_;
};

} // namespace

std::uint32_t nativeSlotCount(std::uint32_t native) noexcept {
    if (native >= kNativeCount) {
        return 0;
    }
    // The signature in natives.def is "NAME(A, B: STRING, C) -> R" or "T -> R" (one argument):
    // the argument count is the number of comma-separated parameters before "->".
    std::string_view doc = kNativeInfo[native].doc;
    std::string_view params = doc.substr(0, doc.find("->"));
    std::size_t open = params.find('(');
    std::uint32_t args = 1;
    if (open != std::string_view::npos) {
        std::size_t close = params.find(')', open);
        std::string_view inside = params.substr(open + 1, close == std::string_view::npos ? close : close - open - 1);
        for (char c : inside) {
            args += c == ',' ? 1 : 0;
        }
    }
    return 1 + args;
}

VerifyResult verify(const Module& module) {
    return Verifier(module).run();
}

} // namespace takt::bytecode

namespace takt::bytecode {

VerifiedProgram loadVerified(std::span<const std::uint8_t> bytes) {
    VerifiedProgram out;
    LoadResult loaded = deserialize(bytes);
    out.hash = loaded.hash;
    if (!loaded.ok()) {
        out.stage = VerifiedProgram::Stage::Decode;
        out.error = std::move(loaded.error);
        return out;
    }
    if (VerifyResult v = verify(loaded.module); !v.ok()) {
        out.stage = VerifiedProgram::Stage::Verify;
        out.error = std::move(v.message);
        return out;
    }
    out.module = std::make_shared<const Module>(std::move(loaded.module));
    return out;
}

VerifiedProgram loadVerifiedFile(const std::filesystem::path& path) {
    std::vector<std::uint8_t> bytes;
    VerifiedProgram out;
    if (!readFileBytes(path, bytes, out.error)) {
        out.stage = VerifiedProgram::Stage::Decode;
        return out;
    }
    return loadVerified(bytes);
}

} // namespace takt::bytecode
