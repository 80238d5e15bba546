// Disassembler (format in disasm.h). Instruction shapes come from kOpcodeInfo (opcodes.def);
// nothing here lists opcodes by hand.
#include "takt/bytecode/disasm.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string_view>

#include "takt/bytecode/opcodes.h"

namespace takt::bytecode {

namespace {

std::string format(const char* fmt, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

std::string_view pouKindName(PouKind k) {
    switch (k) {
    case PouKind::Program: return "PROGRAM";
    case PouKind::Function: return "FUNCTION";
    case PouKind::FunctionBlock: return "FUNCTION_BLOCK";
    case PouKind::Method: return "METHOD";
    case PouKind::TestProgram: return "TEST_PROGRAM";
    case PouKind::TestFunctionBlock: return "TEST_FUNCTION_BLOCK";
    case PouKind::Native: return "NATIVE";
    }
    return "?";
}

class Disassembler {
public:
    Disassembler(const Module& m, const DisasmOptions& o) : m_(m), o_(o) {}

    std::string summary() const {
        std::string out = format("; image: constants %u, globals %u, stack %u bytes; overflow %s\n", m_.constSize,
                                 m_.globalSize, m_.stackSize, m_.overflowTrap ? "traps" : "wraps");
        for (std::size_t i = 0; i < m_.tasks.size(); ++i) {
            const TaskEntry& t = m_.tasks[i];
            out += format("; task %zu %s interval %lld ns priority %u", i, t.name.c_str(),
                          static_cast<long long>(t.intervalNs), t.priority);
            out += t.singleOffset != kNone ? format(" single g:0x%x", t.singleOffset) : "";
            // The located variables the task copies at its cycle start and end, by address.
            for (std::size_t k = 0; k < t.io.size(); ++k) {
                out += (k == 0 ? " io " : ", ") + (t.io[k] < m_.io.size() ? m_.io[t.io[k]].address : "?");
            }
            out += "\n";
        }
        for (const ProgramInstance& p : m_.programs) {
            out += format("; program %s : %s at g:0x%x", p.name.c_str(), pouName(p.pou).c_str(), p.offset);
            out += p.task < m_.tasks.size() ? " task " + m_.tasks[p.task].name + "\n" : "\n";
        }
        for (const IoBinding& b : m_.io) {
            out += format("; io %s -> g:0x%x <%s>\n", b.address.c_str(), b.imageOffset, b.path.c_str());
        }
        for (const AccessEntry& a : m_.access) {
            out += format("; access %s = g:0x%x <%s>%s\n", a.name.c_str(), a.offset, a.path.c_str(),
                          a.readOnly ? " read-only" : "");
        }
        if (m_.initCode != kNone) {
            out += format("; init code at %04x\n", m_.initCode);
        }
        return out;
    }

    std::string pou(std::uint32_t index) const {
        const PouEntry& p = m_.pous[index];
        std::string out = format("pou %u %s %s", index, p.name.c_str(), std::string(pouKindName(p.kind)).c_str());
        if (p.code != kNone) {
            out += format("  code [0x%04x, 0x%04x)", p.code, p.codeEnd);
        }
        out += format("  frame %u", p.frameSize);
        if (p.instanceType < m_.types.size()) {
            const TypeDesc& t = m_.types[p.instanceType];
            out += format("  instance %s (%u bytes)", t.name.c_str(), t.size);
        }
        if (p.native < kNativeCount) {
            out += "  native " + std::string(kNativeInfo[p.native].name);
        }
        out += "\n";
        if (p.code == kNone || p.codeEnd > m_.code.size() || p.code >= p.codeEnd) {
            return out;
        }
        std::set<std::uint32_t> labels = jumpTargets(p);
        auto debug = std::lower_bound(m_.debug.begin(), m_.debug.end(), p.code,
                                      [](const DebugEntry& d, std::uint32_t pc) { return d.codeOffset < pc; });
        std::string lastLine;
        for (std::uint32_t pc = p.code; pc < p.codeEnd;) {
            if (labels.count(pc) != 0) {
                out += format("L%04x:\n", pc);
            }
            if (o_.sourceLines) {
                while (debug != m_.debug.end() && debug->codeOffset <= pc) {
                    if (debug->codeOffset == pc && debug->file < m_.files.size()) {
                        std::string line =
                            format("  ; %s:%u:%u\n", m_.files[debug->file].c_str(), debug->line, debug->column);
                        if (line != lastLine) {
                            out += line;
                            lastLine = line;
                        }
                    }
                    ++debug;
                }
            }
            std::uint32_t word = m_.code[pc];
            if (word >= kOpcodeCount || p.codeEnd - pc < kOpcodeInfo[word].length) {
                out += format("  %04x  .word        0x%08x\n", pc, word);
                ++pc;
                continue;
            }
            out += instruction(p, pc);
            pc += kOpcodeInfo[word].length;
        }
        return out;
    }

private:
    std::string pouName(std::uint32_t index) const {
        return index < m_.pous.size() ? m_.pous[index].name : format("#%u", index);
    }

    std::set<std::uint32_t> jumpTargets(const PouEntry& p) const {
        std::set<std::uint32_t> out;
        for (std::uint32_t pc = p.code; pc < p.codeEnd;) {
            std::uint32_t word = m_.code[pc];
            if (word >= kOpcodeCount || p.codeEnd - pc < kOpcodeInfo[word].length) {
                ++pc;
                continue;
            }
            const OpcodeInfo& info = kOpcodeInfo[word];
            for (std::uint8_t k = 0; k < info.operandCount; ++k) {
                if (info.operands[k].kind == OperandKind::Jump) {
                    out.insert(m_.code[pc + 1 + info.operands[k].word]);
                }
            }
            pc += info.length;
        }
        return out;
    }

    // The variable at an absolute offset: prefer an entry of exactly the accessed width, then
    // the deepest path (a struct and its first member share an offset).
    std::string variableAt(std::uint64_t offset, std::uint32_t width) const {
        const VarEntry* best = nullptr;
        for (const VarEntry& v : m_.variables) {
            if (v.offset != offset || v.kind == VarKind::Temp || v.kind == VarKind::InOut) {
                continue;
            }
            if (best == nullptr || (v.size == width && best->size != width) ||
                ((v.size == width) == (best->size == width) && v.path.size() > best->path.size())) {
                best = &v;
            }
        }
        return best != nullptr ? best->path : std::string();
    }

    std::string instanceMember(const PouEntry& p, std::uint64_t offset, std::uint32_t width) const {
        // A PROGRAM with exactly one instance: the member's full path from the symbol table.
        const ProgramInstance* only = nullptr;
        std::size_t count = 0;
        for (const ProgramInstance& inst : m_.programs) {
            if (inst.pou < m_.pous.size() && &m_.pous[inst.pou] == &p) {
                only = &inst;
                ++count;
            }
        }
        if (count == 1) {
            std::string path = variableAt(only->offset + offset, width);
            if (!path.empty()) {
                return path;
            }
        }
        if (p.instanceType < m_.types.size()) {
            for (const FieldDesc& f : m_.types[p.instanceType].fields) {
                if (f.offset == offset) {
                    return f.name;
                }
            }
        }
        return {};
    }

    std::string data(const PouEntry& p, std::uint32_t word, std::uint32_t width) const {
        std::uint32_t off = addressOffset(word);
        std::string path;
        std::string out;
        switch (addressTag(word)) {
        case kTagAbsolute:
            out = format("g:0x%x", off);
            path = variableAt(off, width);
            break;
        case kTagThis:
            out = format("this+%u", off);
            path = instanceMember(p, off, width);
            break;
        case kTagFrame:
            out = format("fp+%u", off);
            for (const FrameVar& v : p.frame) { // a parameter, result, local or VAR_TEMP by name
                if (v.offset == off) {
                    path = v.name;
                    break;
                }
            }
            break;
        default: out = format("?0x%08x", word); break;
        }
        if (o_.variablePaths && !path.empty()) {
            out += " <" + path + ">";
        }
        return out;
    }

    std::string instruction(const PouEntry& p, std::uint32_t pc) const {
        const OpcodeInfo& info = kOpcodeInfo[m_.code[pc]];
        std::string out = format("  %04x  %-12s", pc, std::string(info.name).c_str());
        for (std::uint8_t k = 0; k < info.operandCount; ++k) {
            const OperandInfo& operand = info.operands[k];
            std::uint32_t w = m_.code[pc + 1 + operand.word];
            out += k == 0 ? " " : ", ";
            switch (operand.kind) {
            case OperandKind::Dest:
            case OperandKind::Source: out += data(p, w, operand.width); break;
            case OperandKind::Imm32:
                out += std::to_string(static_cast<std::int32_t>(w));
                if (static_cast<Opcode>(m_.code[pc]) == Opcode::EQ_AGG && w < m_.types.size()) {
                    out += " <" + m_.types[w].name + ">"; // the type the values are compared as
                }
                break;
            case OperandKind::Imm64: {
                std::uint64_t hi = m_.code[pc + 2 + operand.word];
                out += std::to_string(static_cast<std::int64_t>(w | (hi << 32)));
                break;
            }
            case OperandKind::Jump: out += format("L%04x", w); break;
            case OperandKind::Pou: out += pouName(w); break;
            case OperandKind::Native:
                out += w < kNativeCount ? std::string(kNativeInfo[w].name) : format("native#%u", w);
                break;
            case OperandKind::Count: out += std::to_string(w); break;
            }
        }
        while (!out.empty() && out.back() == ' ') {
            out.pop_back();
        }
        return out + "\n";
    }

    const Module& m_;
    const DisasmOptions& o_;
};

} // namespace

std::string disassemble(const Module& module, const DisasmOptions& options) {
    Disassembler d(module, options);
    std::string out = options.summary ? d.summary() : std::string();
    for (std::uint32_t i = 0; i < module.pous.size(); ++i) {
        out += "\n" + d.pou(i);
    }
    return out;
}

std::string disassemblePou(const Module& module, std::uint32_t pou, const DisasmOptions& options) {
    if (pou >= module.pous.size()) {
        return {};
    }
    return Disassembler(module, options).pou(pou);
}

} // namespace takt::bytecode
