#include "repeats.h"

#include "takt/bytecode/opcodes.h"

#include <algorithm>
#include <utility>

namespace takt::native {

namespace {

using bytecode::Opcode;
using bytecode::OperandKind;

// A run is looked for with segments of up to this many instructions.
constexpr std::size_t kMaxSegmentInstructions = 48;

// The instructions a segment may hold: their emitters reach every address operand through the
// translator's operand accessors (so a varying one is read from the run's table) and cannot jump
// backwards or leave the body.
bool rerollable(Opcode op) {
    switch (op) {
    case Opcode::NOP:
    case Opcode::MOV_8:
    case Opcode::MOV_16:
    case Opcode::MOV_32:
    case Opcode::MOV_64:
    case Opcode::MOVI_8:
    case Opcode::MOVI_16:
    case Opcode::MOVI_32:
    case Opcode::MOVI_64:
    case Opcode::COPY:
    case Opcode::CALL_FB:
    case Opcode::JMP_T:
    case Opcode::JMP_F:
    case Opcode::ADD_I32:
    case Opcode::SUB_I32:
    case Opcode::MUL_I32:
    case Opcode::ADD_I32_IMM:
    case Opcode::ADD_F32:
    case Opcode::SUB_F32:
    case Opcode::MUL_F32:
    case Opcode::DIV_F32:
    case Opcode::ADD_F64:
    case Opcode::SUB_F64:
    case Opcode::MUL_F64:
    case Opcode::DIV_F64:
    case Opcode::MULADD_F32:
    case Opcode::MULADD_F64:
    case Opcode::MUL2ADD_F32:
    case Opcode::MUL2ADD_F64:
    case Opcode::SX_8_32:
    case Opcode::ZX_8_32:
    case Opcode::SX_16_32:
    case Opcode::ZX_16_32:
    case Opcode::I32_TO_F32:
    case Opcode::F32_TO_F64:
    case Opcode::F64_TO_F32:
    case Opcode::AND_B:
    case Opcode::OR_B:
    case Opcode::XOR_B:
    case Opcode::NOT_B:
    case Opcode::EQ_I32:
    case Opcode::NE_I32:
    case Opcode::LT_I32:
    case Opcode::LE_I32:
    case Opcode::GT_I32:
    case Opcode::GE_I32:
    case Opcode::JEQ_I32:
    case Opcode::JNE_I32:
    case Opcode::JLT_I32:
    case Opcode::JLE_I32:
    case Opcode::JGT_I32:
    case Opcode::JGE_I32:
    case Opcode::JLT_F32:
    case Opcode::JLE_F32:
    case Opcode::JNLT_F32:
    case Opcode::JNLE_F32:
    case Opcode::JLT_F64:
    case Opcode::JLE_F64:
    case Opcode::JNLT_F64:
    case Opcode::JNLE_F64: return true;
    default: return false;
    }
}

bool isMovi(Opcode op) {
    return op == Opcode::MOVI_8 || op == Opcode::MOVI_16 || op == Opcode::MOVI_32 || op == Opcode::MOVI_64;
}

// What a word of the first segment may do in the others.
enum class Word : std::uint8_t { Same, Address, Immediate, Jump };

struct Segment {
    std::vector<Word> words; // per word of the segment, from its start
    bool ok = false;
};

// The first segment's words, or !ok when it holds an instruction a run may not, or a jump that
// does not go forward inside it (to its end at most).
Segment describe(const bytecode::Module& module, std::uint32_t start, std::uint32_t length) {
    Segment s;
    s.words.assign(length, Word::Same);
    for (std::uint32_t pc = start; pc < start + length;) {
        const auto op = static_cast<Opcode>(module.code[pc]);
        if (!rerollable(op)) {
            return s;
        }
        // A user FB's body is left inlined at each call: rolled, its members were reached
        // through an offset computed per segment and LLVM reloaded what the call site had just
        // stored (fb_calls ran 1.4x slower). A standard FB's copy takes the member's pointer.
        if (op == Opcode::CALL_FB) {
            const std::uint32_t p = module.code[pc + 1];
            if (p >= module.pous.size() || module.pous[p].native == bytecode::kNone) {
                return s;
            }
        }
        const bytecode::OpcodeInfo& info = bytecode::kOpcodeInfo[module.code[pc]];
        for (std::uint32_t k = 0; k < info.operandCount; ++k) {
            const bytecode::OperandInfo& o = info.operands[k];
            const std::uint32_t at = pc + 1 + o.word - start;
            switch (o.kind) {
            case OperandKind::Dest:
            case OperandKind::Source: s.words[at] = Word::Address; break;
            case OperandKind::Imm32:
                if (isMovi(op)) {
                    s.words[at] = Word::Immediate;
                }
                break;
            case OperandKind::Imm64:
                if (isMovi(op)) {
                    s.words[at] = Word::Immediate;
                    s.words[at + 1] = Word::Immediate;
                }
                break;
            case OperandKind::Jump: {
                const std::uint32_t target = module.code[pc + 1 + o.word];
                if (target <= pc || target > start + length) {
                    return s;
                }
                s.words[at] = Word::Jump;
                break;
            }
            default: break;
            }
        }
        pc += info.length;
    }
    s.ok = true;
    return s;
}

// Segment `other` is the first one (at `start`) with only the words `s` lets differ changed.
bool sameShape(const bytecode::Module& module, const Segment& s, std::uint32_t start, std::uint32_t other) {
    for (std::uint32_t w = 0; w < s.words.size(); ++w) {
        const std::uint32_t a = module.code[start + w];
        const std::uint32_t b = module.code[other + w];
        switch (s.words[w]) {
        case Word::Same:
            if (a != b) {
                return false;
            }
            break;
        case Word::Address:
            if (bytecode::addressTag(a) != bytecode::addressTag(b)) {
                return false;
            }
            break;
        case Word::Immediate: break;
        case Word::Jump:
            if (a - start != b - other) {
                return false;
            }
            break;
        }
    }
    return true;
}

} // namespace

std::vector<RepeatRun> repeatRuns(const bytecode::Module& module, std::uint32_t bodyStart, std::uint32_t bodyEnd,
                                  const std::vector<bool>& starts) {
    std::vector<std::uint32_t> pcs;
    for (std::uint32_t pc = bodyStart; pc < bodyEnd && pc < module.code.size();
         pc += bytecode::kOpcodeInfo[module.code[pc]].length) {
        if (module.code[pc] >= bytecode::kOpcodeCount) {
            return {};
        }
        pcs.push_back(pc);
    }
    const std::size_t n = pcs.size();
    pcs.push_back(bodyEnd);
    // Jumps of the body: a run may not lie inside a loop, nor be entered but at its start.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> jumps; // (from, to)
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t pc = pcs[i];
        if (!starts[pc]) {
            continue;
        }
        const bytecode::OpcodeInfo& info = bytecode::kOpcodeInfo[module.code[pc]];
        for (std::uint32_t k = 0; k < info.operandCount; ++k) {
            if (info.operands[k].kind == OperandKind::Jump) {
                jumps.emplace_back(pc, module.code[pc + 1 + info.operands[k].word]);
            }
        }
    }
    const auto enclosed = [&](std::uint32_t start, std::uint32_t end) {
        for (const auto& [from, to] : jumps) {
            const bool fromInside = from >= start && from < end;
            if (!fromInside && to > start && to < end) {
                return true; // entered in the middle
            }
            if (to <= from && to < end && from >= start) {
                return true; // inside a loop (or a loop inside it)
            }
        }
        return false;
    };
    std::vector<RepeatRun> runs;
    for (std::size_t a = 0; a < n;) {
        RepeatRun best;
        std::size_t bestInstructions = 0;
        for (std::size_t m = 1; m <= kMaxSegmentInstructions && a + m * kMinRepeats <= n; ++m) {
            if (module.code[pcs[a + m]] != module.code[pcs[a]] || !starts[pcs[a]]) {
                continue;
            }
            const std::uint32_t start = pcs[a];
            const std::uint32_t length = pcs[a + m] - start;
            const Segment shape = describe(module, start, length);
            if (!shape.ok) {
                continue;
            }
            std::uint32_t count = 1;
            while (a + (count + 1) * m <= n && pcs[a + (count + 1) * m] - pcs[a + count * m] == length &&
                   sameShape(module, shape, start, pcs[a + count * m])) {
                ++count;
            }
            if (count < kMinRepeats || length * count <= best.length * best.count) {
                continue;
            }
            RepeatRun run{start, length, count, {}, {}};
            if (enclosed(run.start, run.end())) {
                continue;
            }
            for (std::uint32_t w = 0; w < length; ++w) {
                if (shape.words[w] != Word::Address && shape.words[w] != Word::Immediate) {
                    continue;
                }
                for (std::uint32_t j = 1; j < count; ++j) {
                    if (module.code[start + j * length + w] != module.code[start + w]) {
                        run.varying.push_back(w);
                        run.address.push_back(shape.words[w] == Word::Address);
                        break;
                    }
                }
            }
            best = std::move(run);
            bestInstructions = m * count;
        }
        if (bestInstructions == 0) {
            ++a;
            continue;
        }
        runs.push_back(std::move(best));
        a += bestInstructions;
    }
    return runs;
}

} // namespace takt::native
