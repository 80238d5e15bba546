#include "fast_loops.h"

#include "takt/bytecode/opcodes.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>

namespace takt::native {

namespace {

using bytecode::Opcode;
using bytecode::OperandKind;

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();
// Instructions a fast entry may run without a poll of the abort flag (see fast_loops.h).
constexpr std::uint32_t kUncheckedInstructions = 65'536;
constexpr std::uint32_t kPollInterval = 64; // the interpreter's: every 64th tick
// A loop known to run at most this many times is left alone: LLVM unrolls it whole, and a second
// copy only cost (array_struct's 8-step inner loop ran 40% slower with one).
constexpr std::int64_t kShortLoop = 16;

struct Span {
    std::uint32_t tag;
    std::uint64_t offset;
    std::uint64_t size; // kUnbounded: from offset on
};

// A fused FOR back-edge with an immediate bound ("d4iij", "d4d2iij"): the counter is operand 0,
// the limit, the step and the head the last three.
struct CountedBackEdge {
    std::uint32_t counter; // operand word
    std::uint32_t head;
    std::int32_t limit;
    std::int32_t step;
};

std::optional<CountedBackEdge> countedBackEdge(const std::uint32_t* at) {
    const auto op = static_cast<Opcode>(at[0]);
    if (op != Opcode::LOOP_I32_IMM && op != Opcode::LOOP_DN_I32_IMM && op != Opcode::LOOP_I16_IMM &&
        op != Opcode::LOOP_DN_I16_IMM) {
        return std::nullopt;
    }
    const bytecode::OpcodeInfo& info = bytecode::opcodeInfo(op);
    const auto operand = [&](std::size_t k) { return at[1 + info.operands[k].word]; };
    const std::size_t n = info.operandCount;
    return CountedBackEdge{operand(0), operand(n - 1), static_cast<std::int32_t>(operand(n - 3)),
                           static_cast<std::int32_t>(operand(n - 2))};
}

// What only a call or a store through a pointer can change: anything.
bool writesAnywhere(Opcode op) {
    switch (op) {
    case Opcode::CALL_FN:
    case Opcode::CALL_FB:
    case Opcode::CALL_FB_IND:
    case Opcode::CALL_IFACE:
    case Opcode::CALL_VIRT:
    case Opcode::CALL_NATIVE:
    case Opcode::STI_8:
    case Opcode::STI_16:
    case Opcode::STI_32:
    case Opcode::STI_64:
    case Opcode::STI_N: return true;
    default: return false;
    }
}

// The bytes destination operand k of the instruction at `at` may write. A width-0 destination
// is an array element store's whole array (element size x count) or, for any other, unbounded.
Span destinationSpan(const std::uint32_t* at, const bytecode::OpcodeInfo& info, std::size_t k) {
    const bytecode::OperandInfo& d = info.operands[k];
    const std::uint32_t word = at[1 + d.word];
    Span span{bytecode::addressTag(word), bytecode::addressOffset(word), d.width};
    if (d.width == 0) {
        span.size = kUnbounded;
        const auto op = static_cast<Opcode>(at[0]);
        if (op == Opcode::STX_8 || op == Opcode::STX_16 || op == Opcode::STX_32 || op == Opcode::STX_64 ||
            op == Opcode::STX_N) {
            // "s?d0s4icc": the last two operands are the element size and the element count.
            const std::uint64_t elementSize = at[1 + info.operands[info.operandCount - 2].word];
            const std::uint64_t count = at[1 + info.operands[info.operandCount - 1].word];
            span.size = elementSize * count;
        }
    }
    return span;
}

bool apart(const Span& a, const Span& b, std::uint64_t stackBase, bool instanceApartFromFrame) {
    const auto end = [](const Span& s) { return s.size == kUnbounded ? kUnbounded : s.offset + s.size; };
    if (a.tag == b.tag) {
        return end(a) <= b.offset || end(b) <= a.offset;
    }
    const auto pair = [&](std::uint32_t x, std::uint32_t y) {
        return (a.tag == x && b.tag == y) || (a.tag == y && b.tag == x);
    };
    if (pair(bytecode::kTagThis, bytecode::kTagFrame)) {
        return instanceApartFromFrame;
    }
    if (pair(bytecode::kTagAbsolute, bytecode::kTagFrame)) {
        // A global ends below the stack, where every frame lies.
        return end(a.tag == bytecode::kTagAbsolute ? a : b) <= stackBase;
    }
    return false; // an absolute address may lie in the instance
}

// The trips of a loop whose counter the instruction before its head (or the one before that, for
// an INT counter copied to its variable) sets to a constant, and that instruction; nullopt when
// not so.
struct KnownTrips {
    std::int64_t trips; // the body's runs: back-edges taken + 1
    std::uint32_t set;  // the MOVI_32 setting the counter
};

std::optional<KnownTrips> knownTrips(const bytecode::Module& module, const std::vector<std::uint32_t>& before,
                                     const CountedBackEdge& loop) {
    std::uint32_t pc = loop.head;
    for (int back = 0; back < 2 && before[pc] != bytecode::kNone; ++back) {
        pc = before[pc];
        if (static_cast<Opcode>(module.code[pc]) == Opcode::MOVI_32 && module.code[pc + 1] == loop.counter) {
            const std::int64_t start = static_cast<std::int32_t>(module.code[pc + 2]);
            const std::int64_t room = loop.step < 0 ? start - loop.limit : loop.limit - start;
            return KnownTrips{room < 0 ? 1 : room / std::abs(std::int64_t{loop.step}) + 2, pc};
        }
    }
    return std::nullopt;
}

// No jump from outside [head, backEdge] lands inside it after the head.
bool enteredAtHeadOnly(const bytecode::Module& module, const std::vector<bool>& starts, std::uint32_t head,
                       std::uint32_t backEdge) {
    for (std::uint32_t pc = 0; pc < starts.size(); ++pc) {
        if (!starts[pc] || (pc >= head && pc <= backEdge)) {
            continue;
        }
        const bytecode::OpcodeInfo& info = bytecode::opcodeInfo(static_cast<Opcode>(module.code[pc]));
        for (std::size_t k = 0; k < info.operandCount; ++k) {
            if (info.operands[k].kind != OperandKind::Jump) {
                continue;
            }
            const std::uint32_t target = module.code[pc + 1 + info.operands[k].word];
            if (target > head && target <= backEdge) {
                return false;
            }
        }
    }
    return true;
}

// What one trip of a qualifying body runs at most: back-edges (its own and those of the counted
// loops inside it) and instructions.
struct TripCost {
    std::uint64_t backEdges = 1;
    std::uint64_t instructions = 1;
};

std::optional<TripCost> innerLoop(const bytecode::Module& module, const std::vector<bool>& starts,
                                  const std::vector<std::uint32_t>& before, std::uint32_t outerHead, std::uint32_t pc,
                                  bool instanceApartFromFrame);

// Whether the body [head, backEdge) leaves the counter alone and leaves the loop only forward,
// and what a trip of it costs. `nested`: the body may hold counted loops of known trips (one
// level), entered only through the instruction setting their counter, so that each trip runs at
// most the back-edges counted here whichever way its branches go.
std::optional<TripCost> qualifies(const bytecode::Module& module, const std::vector<bool>& starts,
                                  const std::vector<std::uint32_t>& before, std::uint32_t head, std::uint32_t backEdge,
                                  const Span& counter, bool instanceApartFromFrame, bool nested) {
    const std::uint64_t stackBase = std::uint64_t{module.constSize} + module.globalSize;
    TripCost cost;
    std::uint32_t pc = head;
    while (pc < backEdge) {
        if (!starts[pc]) {
            return std::nullopt;
        }
        const auto op = static_cast<Opcode>(module.code[pc]);
        if (writesAnywhere(op)) {
            return std::nullopt;
        }
        const bytecode::OpcodeInfo& info = bytecode::opcodeInfo(op);
        for (std::size_t k = 0; k < info.operandCount; ++k) {
            const bytecode::OperandInfo& operand = info.operands[k];
            if (operand.kind == OperandKind::Jump && module.code[pc + 1 + operand.word] <= pc) {
                const std::optional<TripCost> inner =
                    nested ? innerLoop(module, starts, before, head, pc, instanceApartFromFrame) : std::nullopt;
                if (!inner) {
                    return std::nullopt; // another loop inside, or a jump back
                }
                cost.backEdges += inner->backEdges;
                cost.instructions += inner->instructions;
            }
            if (operand.kind == OperandKind::Dest &&
                !apart(destinationSpan(&module.code[pc], info, k), counter, stackBase, instanceApartFromFrame)) {
                return std::nullopt;
            }
        }
        ++cost.instructions;
        pc += info.length;
    }
    if (pc != backEdge) {
        return std::nullopt;
    }
    return cost;
}

// The back-edge at `pc` inside the body of a loop starting at `outerHead`, when it closes a
// counted loop of known trips that qualifies itself and is entered only through the instruction
// setting its counter: what its trips add to one trip of the outer body beyond the one run of
// its instructions the outer body counts (their other runs and its back-edges).
std::optional<TripCost> innerLoop(const bytecode::Module& module, const std::vector<bool>& starts,
                                  const std::vector<std::uint32_t>& before, std::uint32_t outerHead, std::uint32_t pc,
                                  bool instanceApartFromFrame) {
    const std::optional<CountedBackEdge> loop = countedBackEdge(&module.code[pc]);
    if (!loop || loop->head <= outerHead || loop->head >= pc || !starts[loop->head]) {
        return std::nullopt;
    }
    const std::optional<KnownTrips> trips = knownTrips(module, before, *loop);
    if (!trips || trips->set < outerHead || !enteredAtHeadOnly(module, starts, trips->set, pc)) {
        return std::nullopt;
    }
    const Span counter{bytecode::addressTag(loop->counter), bytecode::addressOffset(loop->counter), 4};
    const std::optional<TripCost> body =
        qualifies(module, starts, before, loop->head, pc, counter, instanceApartFromFrame, false);
    if (!body) {
        return std::nullopt;
    }
    const auto more = static_cast<std::uint64_t>(trips->trips - 1);
    return TripCost{more, more * body->instructions};
}

} // namespace

std::vector<FastLoop> fastLoops(const bytecode::Module& module, const std::vector<bool>& starts,
                                bool instanceApartFromFrame) {
    std::vector<FastLoop> loops;
    std::vector<std::uint32_t> before(starts.size(), bytecode::kNone); // the instruction before each
    for (std::uint32_t pc = 0, last = bytecode::kNone; pc < starts.size(); ++pc) {
        if (starts[pc]) {
            before[pc] = last;
            last = pc;
        }
    }
    for (std::uint32_t pc = 0; pc < starts.size(); ++pc) {
        if (!starts[pc]) {
            continue;
        }
        const std::optional<CountedBackEdge> loop = countedBackEdge(&module.code[pc]);
        if (!loop || loop->head >= pc || !starts[loop->head]) {
            continue;
        }
        const std::uint32_t head = loop->head;
        const Span counter{bytecode::addressTag(loop->counter), bytecode::addressOffset(loop->counter), 4};
        const std::optional<KnownTrips> trips = knownTrips(module, before, *loop);
        if ((trips && trips->trips <= kShortLoop) || !enteredAtHeadOnly(module, starts, head, pc)) {
            continue;
        }
        const std::optional<TripCost> cost =
            qualifies(module, starts, before, head, pc, counter, instanceApartFromFrame, true);
        if (!cost) {
            continue;
        }
        // A loop holding others runs its fast entries for at least 64 trips only when those stay
        // within the instructions an entry may run unpolled (an innermost loop always does).
        const std::uint64_t maxTrips = kUncheckedInstructions / cost->instructions;
        if (cost->backEdges > 1 && maxTrips < kPollInterval) {
            continue;
        }
        loops.push_back({head, pc, static_cast<std::uint32_t>(std::max<std::uint64_t>(kPollInterval, maxTrips)),
                         loop->limit, loop->step, static_cast<std::uint32_t>(cost->backEdges)});
    }
    return loops;
}

} // namespace takt::native
