#include "takt/vm/flow.h"

#include "takt/bytecode/opcodes.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace takt::vm {
namespace {

using bytecode::Module;
using bytecode::TypeDesc;
using bytecode::ValueKind;

// A value the editor can show on its own: the elementary kinds (BOOL .. subranges), not arrays,
// structures, instances or references.
bool shown(ValueKind k) noexcept {
    return static_cast<std::uint8_t>(k) < static_cast<std::uint8_t>(ValueKind::Array);
}

// Names the shown value that an access of `width` bytes (0: as long as the value) at `offset` in
// a value of type `type` falls on, appending ".member" and "[i, j]" to `name`; false for an access
// that is not exactly one shown value (part of one, several at once, a compiler's member).
bool nameIn(const Module& m, std::uint32_t type, std::uint32_t offset, std::uint32_t width, std::string& name,
            std::uint32_t& leaf) {
    for (int guard = 0; guard < 64 && type < m.types.size(); ++guard) {
        const TypeDesc& t = m.types[type];
        if (shown(t.kind)) {
            if (offset != 0 || (width != 0 && width != t.size) || t.size > kMaxFlowValue) {
                return false;
            }
            leaf = type;
            return true;
        }
        if (t.kind == ValueKind::Array) {
            const std::uint32_t element = t.element < m.types.size() ? m.types[t.element].size : 0;
            if (element == 0 || t.bounds.empty() || t.bounds.size() % 2 != 0) {
                return false;
            }
            // Row-major: the last index varies fastest.
            std::uint64_t index = offset / element;
            std::vector<std::int64_t> at(t.bounds.size() / 2);
            for (std::size_t d = at.size(); d-- > 0;) {
                const auto extent = static_cast<std::uint64_t>(t.bounds[2 * d + 1] - t.bounds[2 * d] + 1);
                at[d] = t.bounds[2 * d] + static_cast<std::int64_t>(index % extent);
                index /= extent;
            }
            name += fmt::format("[{}]", fmt::join(at, ", "));
            offset %= element;
            type = t.element;
            continue;
        }
        if (t.kind != ValueKind::Struct && t.kind != ValueKind::FunctionBlock && t.kind != ValueKind::Program) {
            return false;
        }
        const bytecode::FieldDesc* in = nullptr;
        for (const bytecode::FieldDesc& f : t.fields) {
            if (f.type < m.types.size() && offset >= f.offset && offset < f.offset + m.types[f.type].size) {
                in = &f;
                break;
            }
        }
        if (in == nullptr || in->name.find('$') != std::string::npos) {
            return false;
        }
        name += name.empty() ? in->name : "." + in->name;
        offset -= in->offset;
        type = in->type;
    }
    return false;
}

// An absolute address: the innermost variable of the table that holds it, then down its type.
bool nameGlobal(const Module& m, std::uint32_t offset, std::uint32_t width, std::string& name, std::uint32_t& leaf) {
    const bytecode::VarEntry* best = nullptr;
    for (const bytecode::VarEntry& v : m.variables) {
        if (offset >= v.offset && offset < v.offset + v.size && (best == nullptr || v.size < best->size)) {
            best = &v;
        }
    }
    if (best == nullptr || best->path.find('$') != std::string::npos) {
        return false;
    }
    name = best->path;
    return nameIn(m, best->type, offset - best->offset, width, name, leaf);
}

// A frame address: the POU's frame variable that holds it (a VAR_IN_OUT's slot holds a reference,
// not its value), then down its type.
bool nameFrame(const Module& m, const bytecode::PouEntry& pou, std::uint32_t offset, std::uint32_t width,
               std::string& name, std::uint32_t& leaf) {
    for (const bytecode::FrameVar& v : pou.frame) {
        if (v.kind != bytecode::VarKind::InOut && v.type < m.types.size() && offset >= v.offset &&
            offset - v.offset < m.types[v.type].size && v.name.find('$') == std::string::npos) {
            name = v.name;
            return nameIn(m, v.type, offset - v.offset, width, name, leaf);
        }
    }
    return false;
}

bool isCall(bytecode::Opcode op) noexcept {
    return bytecode::opcodeName(op).starts_with("CALL");
}

// The instructions whose width-0 operands are whole STRINGs or WSTRINGs.
bool stringOperands(bytecode::Opcode op) noexcept {
    using bytecode::Opcode;
    return op == Opcode::SMOV || op == Opcode::WSMOV || op == Opcode::SCMP || op == Opcode::WSCMP || op == Opcode::COPY;
}

// The data the statement's code from `pc` to `end` reads and writes, named, each once.
void accessesOf(const Module& m, const bytecode::PouEntry& pou, std::uint32_t pc, std::uint32_t end, FlowPlan& plan) {
    const std::size_t first = plan.accesses.size();
    bool afterCall = false;
    while (pc < end && pc < m.code.size() && m.code[pc] < bytecode::kOpcodeCount) {
        const auto op = static_cast<bytecode::Opcode>(m.code[pc]);
        const bytecode::OpcodeInfo& info = bytecode::opcodeInfo(op);
        for (std::uint8_t k = 0; k < info.operandCount && pc + 1 + info.operands[k].word < m.code.size(); ++k) {
            const bytecode::OperandInfo& o = info.operands[k];
            // Width 0 is a block: the base of an indexed access, an FB instance, a STRUCT copied
            // whole. Only a STRING's (copied, compared) is one value.
            if ((o.kind != bytecode::OperandKind::Dest && o.kind != bytecode::OperandKind::Source) ||
                (o.width == 0 && !stringOperands(op))) {
                continue;
            }
            const std::uint32_t word = m.code[pc + 1 + o.word];
            const std::uint32_t tag = word >> bytecode::kOffsetBits;
            const std::uint32_t offset = word & bytecode::kOffsetMask;
            FlowAccess a;
            a.tag = static_cast<std::uint8_t>(tag);
            a.offset = offset;
            a.written = o.kind == bytecode::OperandKind::Dest;
            a.late = !a.written && afterCall;
            bool named = false;
            if (tag == bytecode::kTagThis && pou.instanceType != bytecode::kNone) {
                named = nameIn(m, pou.instanceType, offset, o.width, a.name, a.type);
            } else if (tag == bytecode::kTagAbsolute && offset >= m.constSize) {
                named = nameGlobal(m, offset, o.width, a.name, a.type);
            } else if (tag == bytecode::kTagFrame) {
                named = nameFrame(m, pou, offset, o.width, a.name, a.type);
            }
            if (!named || (o.width == 0 && m.types[a.type].kind != ValueKind::String &&
                           m.types[a.type].kind != ValueKind::WString)) {
                continue;
            }
            a.size = m.types[a.type].size;
            const auto same = [&a](const FlowAccess& b) {
                return b.tag == a.tag && b.offset == a.offset && b.written == a.written;
            };
            if (std::none_of(plan.accesses.begin() + static_cast<std::ptrdiff_t>(first), plan.accesses.end(), same)) {
                a.slot = plan.valueBytes;
                plan.valueBytes += (a.size + 7) & ~7u; // 8-byte slots: every copy is of aligned bytes
                plan.accesses.push_back(std::move(a));
            }
        }
        afterCall = afterCall || isCall(op);
        pc += info.length;
    }
    // A read after a call of what the statement itself writes (total := total + F(x)) is copied
    // before the statement, or it would show the value written.
    for (std::size_t i = first; i < plan.accesses.size(); ++i) {
        FlowAccess& r = plan.accesses[i];
        for (std::size_t j = first; r.late && j < plan.accesses.size(); ++j) {
            const FlowAccess& w = plan.accesses[j];
            r.late = !(w.written && w.tag == r.tag && w.offset == r.offset);
        }
    }
}

} // namespace

bool planFlow(const Module& module, std::uint32_t pou, FlowPlan& out, std::string& why) {
    if (pou >= module.pous.size()) {
        why = "no such POU";
        return false;
    }
    const bytecode::PouEntry& p = module.pous[pou];
    if (p.code == bytecode::kNone || p.native != bytecode::kNone || p.codeEnd <= p.code) {
        why = fmt::format("{} has no code of its own", p.name);
        return false;
    }
    FlowPlan plan;
    plan.pou = pou;
    plan.codeBegin = p.code;
    plan.codeEnd = p.codeEnd;
    for (const bytecode::DebugEntry& d : module.debug) { // sorted by code offset
        if (d.statement && d.codeOffset >= p.code && d.codeOffset < p.codeEnd &&
            (plan.statements.empty() || plan.statements.back().pc != d.codeOffset)) {
            plan.statements.push_back(FlowStatement{d.codeOffset, d.file, d.line, 0, 0});
        }
    }
    if (plan.statements.empty()) {
        why = fmt::format("{} has no statements", p.name);
        return false;
    }
    for (std::size_t i = 0; i < plan.statements.size(); ++i) {
        FlowStatement& s = plan.statements[i];
        const std::uint32_t end = i + 1 < plan.statements.size() ? plan.statements[i + 1].pc : p.codeEnd;
        s.firstAccess = static_cast<std::uint32_t>(plan.accesses.size());
        accessesOf(module, p, s.pc, end, plan);
        s.accessCount = static_cast<std::uint32_t>(plan.accesses.size()) - s.firstAccess;
    }
    out = std::move(plan);
    return true;
}

FlowRecorder::FlowRecorder(FlowPlan plan, std::uint32_t instance) : plan_(std::move(plan)), instance_(instance) {
    statementAt_.assign(plan_.codeEnd - plan_.codeBegin, bytecode::kNone);
    for (std::uint32_t i = 0; i < plan_.statements.size(); ++i) {
        statementAt_[plan_.statements[i].pc - plan_.codeBegin] = i;
    }
    for (Record& r : records_) {
        r.counts.assign(plan_.statements.size(), 0);
        r.order.assign(plan_.statements.size(), 0);
        r.values.assign(plan_.valueBytes, 0);
    }
    open_.fill(bytecode::kNone);
}

bool FlowRecorder::owns(const void* thread) noexcept {
    const void* owner = owner_.load(std::memory_order_relaxed);
    if (owner == thread) {
        return true;
    }
    return owner == nullptr && owner_.compare_exchange_strong(owner, thread, std::memory_order_acq_rel);
}

void FlowRecorder::copy(std::uint32_t statement, bool done, const ExprScope& at) noexcept {
    const FlowStatement& s = plan_.statements[statement];
    std::uint8_t* const values = records_[back_].values.data();
    for (std::uint32_t k = s.firstAccess; k < s.firstAccess + s.accessCount; ++k) {
        const FlowAccess& a = plan_.accesses[k];
        if ((a.written || a.late) != done) {
            continue;
        }
        const std::uint32_t base = a.tag == bytecode::kTagThis    ? at.thisOffset
                                   : a.tag == bytecode::kTagFrame ? at.frameOffset
                                                                  : 0;
        const std::uint64_t from = std::uint64_t{base} + a.offset;
        if (from + a.size <= at.imageSize) {
            std::memcpy(values + a.slot, at.image + from, a.size);
        }
    }
}

void FlowRecorder::runStarted(const void* thread) noexcept {
    if (owner_.load(std::memory_order_relaxed) == thread) {
        open_.fill(bytecode::kNone); // a run that faulted left its statements open
    }
}

void FlowRecorder::statement(const void* thread, std::uint32_t pc, std::uint32_t depth, const ExprScope& at) noexcept {
    if (pc < plan_.codeBegin || pc >= plan_.codeEnd || depth > bytecode::kMaxCallDepth ||
        (instance_ != kAnyInstance && at.thisOffset != instance_)) {
        return;
    }
    const std::uint32_t index = statementAt_[pc - plan_.codeBegin];
    if (index == bytecode::kNone || !owns(thread)) {
        return;
    }
    Record& r = records_[back_];
    if (!begun_) {
        std::fill(r.counts.begin(), r.counts.end(), 0);
        begun_ = true;
    }
    copy(index, false, at);
    ++r.counts[index];
    r.order[index] = ++stamp_;
    open_[depth] = index;
}

void FlowRecorder::statementDone(const void* thread, std::uint32_t depth, const ExprScope& at) noexcept {
    // The owner first: another thread must not read what the owner writes.
    if (owner_.load(std::memory_order_relaxed) != thread || depth > bytecode::kMaxCallDepth ||
        open_[depth] == bytecode::kNone) {
        return;
    }
    copy(open_[depth], true, at);
    open_[depth] = bytecode::kNone;
}

void FlowRecorder::runEnded(const void* thread) noexcept {
    if (owner_.load(std::memory_order_relaxed) != thread || !begun_) {
        return;
    }
    records_[back_].run = ++runs_;
    back_ = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel) & ~kFresh;
    begun_ = false;
    stamp_ = 0;
}

bool FlowRecorder::latest(View& out) noexcept {
    if ((middle_.load(std::memory_order_acquire) & kFresh) != 0) {
        front_ = middle_.exchange(front_, std::memory_order_acq_rel) & ~kFresh;
    }
    const Record& r = records_[front_];
    if (r.run == 0) {
        return false;
    }
    out.run = r.run;
    out.counts = r.counts;
    out.order = r.order;
    out.values = r.values;
    return true;
}

} // namespace takt::vm
