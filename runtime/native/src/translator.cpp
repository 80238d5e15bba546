// The native tier's translator: verified bytecode to LLVM IR, one function per POU body (the
// program compiler, program_compiler.cpp, makes machine code of them).
//
// Each instruction becomes the IR of its interpreter handler over the same image: operands
// resolve to image + base[tag] + offset (the this and frame bases are the function's arguments,
// since a body that calls nothing keeps them), loads and stores are unaligned and in the
// handler's order, so a destination that is also a source behaves the same. A trap stores the
// instruction's code offset in the RunContext and returns the Trap; back-edges charge the
// watchdog budget and poll the abort flag exactly as the interpreter does (every 64th tick), so
// a fault or an abort happens at the same instruction with the same image.
//
// Which instructions are translated is decided per opcode by a specialisation of Op<> below;
// the tables of emitters are generated from opcodes.def, so an opcode added to the list is
// "unsupported" (the module runs on the interpreter) until it gets one.
#include "takt/native/native.h"

#include "fast_loops.h"
#include "plugin_api.h"
#include "pou_translator.h"
#include "repeats.h"
#include "standard_fbs.h"

#include "takt/bytecode/opcodes.h"

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Weverything"
#endif
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <vector>

namespace takt::native {

llvm::StructType* runContextType(llvm::LLVMContext& cx) {
    llvm::Type* ptr = llvm::Type::getInt8PtrTy(cx);
    llvm::Type* i64 = llvm::Type::getInt64Ty(cx);
    return llvm::StructType::get(cx, {i64, ptr, llvm::Type::getInt32Ty(cx), ptr, i64, ptr});
}

namespace {

using bytecode::Opcode;
using bytecode::Trap;
using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

// The generated code reads native::Host as an array of pointers (Emitter::HostSlot).
static_assert(offsetof(Host, callNative) == 1 * sizeof(void*) && offsetof(Host, assertFailed) == 6 * sizeof(void*) &&
              sizeof(Host) == 7 * sizeof(void*));
static_assert(offsetof(RunContext, host) == 24 && offsetof(RunContext, stackEnd) == 32 &&
              offsetof(RunContext, fbContext) == 40);

constexpr std::uint64_t kAbortPollMask = 63; // as the interpreter: the flag on every 64th tick

// The state of translating one POU body.
struct Emitter {
    llvm::LLVMContext& cx;
    llvm::Module& mod;
    llvm::IRBuilder<>& b;
    llvm::Function* fn = nullptr;
    const std::uint32_t* code = nullptr;
    std::uint32_t pc = 0;
    Value* image = nullptr;
    Value* thisOffset = nullptr;  // i32
    Value* frameOffset = nullptr; // i32
    std::array<Value*, 3> base{}; // i8*: image, image + this, image + frame
    Value* ctx = nullptr;
    Value* depth = nullptr; // i32: call depth of this body
    Value* ticks = nullptr; // i64 alloca: budget left in this run (in ctx across calls)
    Value* abort = nullptr; // i8*: the abort flag
    // i64: RunContext::stackEnd, the bound of calls and references; i8*: RunContext::fbContext.
    // Read once per body: the code is shared by the call stacks of all task threads.
    Value* stackEnd = nullptr;
    Value* fbContext = nullptr;
    std::vector<BasicBlock*>* blocks = nullptr;
    // Alias scopes of the instance and the frame: an entry's instance lies in the globals and its
    // frame in the call stack it runs on (the runner checks both before it calls the code; the
    // globals lie below every task's stack too), and the verifier
    // holds this- and frame-relative operands inside them, so the two never overlap. Telling
    // LLVM lets it keep variables in registers across a loop.
    std::array<llvm::MDNode*, 3> scope{};
    std::array<llvm::MDNode*, 3> noalias{};
    // The loads and stores whose bytes are known relative to their tag's base: an operand's
    // (direct) or, for an element access, those of every element the bounds check lets through.
    // Once the body is translated each array's element accesses get an alias scope of their own,
    // which the direct accesses apart from the array declare they do not alias (scopeArrays()).
    struct Span {
        llvm::Instruction* access;
        std::uint32_t tag;
        std::uint64_t begin;
        std::uint64_t end;
        bool element;
    };
    std::vector<Span> spans{};
    std::uint64_t constSize = 0; // stores through a reference below this are refused
    const bytecode::Module* module = nullptr;
    // The function of POU p's body in this module (a declaration, or this body), null when p
    // has none.
    std::function<llvm::Function*(std::uint32_t)> bodyOf{};
    llvm::GlobalVariable* bodyTable = nullptr;  // [N x i8*]: each POU's body, for dispatch
    llvm::GlobalVariable* frameTable = nullptr; // [N x i32]: each POU's frame size
    llvm::GlobalVariable* pcBase = nullptr;     // i32: the code offset of this POU's start
    std::uint32_t pouStart = 0;
    std::span<const DirectFb> directFbs{}; // per POU, may be empty
    StandardFbs* standardFbs = nullptr;    // the FBs' bitcode, when linked
    // The FOR loops translated twice (fast_loops.h): every entry from outside goes through the
    // preheader, which picks the copy whose back-edge counts ticks without checking them when the
    // budget covers the trips left, the checked loop otherwise.
    struct Fast {
        FastLoop loop;
        BasicBlock* preheader = nullptr;
        std::vector<BasicBlock*> blocks; // the unchecked copy, by pc - loop.head
    };
    std::vector<Fast> fastLoops{};
    const Fast* copying = nullptr; // the unchecked copy being translated
    // Runs of repeated segments emitted as a loop (repeats.h): the first segment's instructions
    // with `index` the segment, the varying operand words read from a table per segment (or
    // computed, when they step by a constant).
    struct Rolled {
        RepeatRun run;
        BasicBlock* entry = nullptr;  // every entry from outside: index 0
        BasicBlock* header = nullptr; // the index's phi
        BasicBlock* latch = nullptr;  // the end of a segment: the next one, or out after the last
        llvm::PHINode* index = nullptr;
        std::map<std::uint32_t, std::pair<llvm::GlobalVariable*, std::int64_t>> words; // word -> table, or stride
        std::map<std::uint32_t, std::uint32_t> first;                                  // word -> its value in segment 0
    };
    std::vector<Rolled> rolled{};
    const Rolled* rolling = nullptr; // the run whose first segment is being translated
    // A PROGRAM's or FB's frame (its temporaries) in an LLVM alloca rather than the image, so
    // they live in machine registers: set per body while nothing outside it can see the frame,
    // cleared (and the body translated again on the image) when an instruction takes a frame
    // operand's image offset (host calls, ADDR, IDX, a callee's arguments) or the body calls one
    // whose caller passes arguments in the frame. Nothing is written back: the stack region of
    // the image is scratch, not state (LoadedProgram::stateSize).
    std::uint32_t privateFrameBytes = 0; // the frame's size while it is private, else 0
    bool frameEscapes = false;

    [[nodiscard]] std::uint32_t w(std::uint32_t k) const { return code[pc + 1 + k]; }
    // Operand word k of this instruction differs between the segments of the run being rolled.
    [[nodiscard]] bool varies(std::uint32_t k) const {
        return rolling != nullptr && rolling->words.count(pc + 1 + k - rolling->run.start) != 0;
    }
    // Word k in the current segment (varies(k)): first + index * stride, computed without wrap
    // (nuw: every segment's word is a valid offset), so LLVM sees the operands of a segment, and
    // a called FB's members, at constant distances from each other.
    Value* varyingWord(std::uint32_t k) {
        const std::uint32_t at = pc + 1 + k - rolling->run.start;
        const auto& [table, stride] = rolling->words.at(at);
        if (table == nullptr) {
            Value* step = b.CreateMul(rolling->index, c32(static_cast<std::uint32_t>(stride)), "", true);
            return b.CreateNUWAdd(c32(rolling->first.at(at)), step);
        }
        Value* index[] = {c32(0), rolling->index};
        return b.CreateLoad(i32(), b.CreateInBoundsGEP(table->getValueType(), table, index));
    }
    Value* varyingWord64(std::uint32_t k) { return b.CreateZExt(varyingWord(k), i64()); }
    // Immediate word k (a MOVI's value) as an i32 constant, or this segment's.
    Value* imm32Value(std::uint32_t k) { return varies(k) ? varyingWord(k) : c32(w(k)); }
    Value* imm64Value(std::uint32_t k) {
        if (!varies(k) && !varies(k + 1)) {
            return c64(imm64(k));
        }
        Value* lo = b.CreateZExt(imm32Value(k), i64());
        return b.CreateOr(lo, b.CreateShl(b.CreateZExt(imm32Value(k + 1), i64()), 32));
    }
    // The code offset of this instruction in the segment running (a trap's pc): the POU's
    // start, a constant of the program (object_cache.h), plus the offset in the POU.
    Value* pcValue() {
        Value* inPou = c32(pc - pouStart);
        if (rolling != nullptr) {
            inPou = b.CreateAdd(inPou, b.CreateMul(rolling->index, c32(rolling->run.length)));
        }
        return b.CreateAdd(b.CreateLoad(i32(), pcBase), inPou);
    }
    [[nodiscard]] std::int32_t imm32(std::uint32_t k) const { return static_cast<std::int32_t>(w(k)); }
    [[nodiscard]] std::uint64_t imm64(std::uint32_t k) const {
        return static_cast<std::uint64_t>(w(k)) | (static_cast<std::uint64_t>(w(k + 1)) << 32);
    }

    Type* i1() { return b.getInt1Ty(); }
    Type* i8() { return b.getInt8Ty(); }
    Type* i16() { return b.getInt16Ty(); }
    Type* i32() { return b.getInt32Ty(); }
    Type* i64() { return b.getInt64Ty(); }
    Type* f32() { return b.getFloatTy(); }
    Type* f64() { return b.getDoubleTy(); }
    Value* c32(std::uint32_t v) { return b.getInt32(v); }
    Value* c64(std::uint64_t v) { return b.getInt64(v); }

    // Operand k as an i8* into the image.
    Value* addr(std::uint32_t k) {
        const std::uint32_t word = w(k);
        if (varies(k)) {
            return b.CreateInBoundsGEP(i8(), base[bytecode::addressTag(word)], varyingWord64(k));
        }
        return b.CreateConstInBoundsGEP1_64(i8(), base[bytecode::addressTag(word)], bytecode::addressOffset(word));
    }
    // The image offset of operand k (ADDR, IDX), as the interpreter computes A(k) - image.
    Value* offsetOf(std::uint32_t k) {
        const std::uint32_t word = w(k);
        Value* off = varies(k) ? varyingWord(k) : c32(bytecode::addressOffset(word));
        switch (bytecode::addressTag(word)) {
        case bytecode::kTagThis: return b.CreateNUWAdd(thisOffset, off);
        case bytecode::kTagFrame: frameEscapes = true; return b.CreateNUWAdd(frameOffset, off);
        default: return off;
        }
    }
    // `tag`: the space the address lies in (an operand's tag, or the array's for an element);
    // kTagAbsolute for a dereferenced pointer, which may point anywhere. `value`: an operand or
    // an array element, which the compiler aligns to its size; outside the frame (globals,
    // program and FB instances, which other tasks' threads may read or write) such a value of
    // up to 64 bits moves as one `unordered` atomic access, which LLVM never splits or tears
    // yet may still keep in a register across a loop (docs/language-notes.md, "Data shared
    // between tasks"). A frame is the running task's own, and a dereferenced pointer may be
    // unaligned: plain accesses, align 1. So is every access of a program with fewer than two
    // tasks: nothing else runs its code, and the atomic accesses keep LLVM from folding the
    // stores and loads of inlined FB bodies (fb_calls and timers_edges ran 15-20 % slower).
    [[nodiscard]] bool atomicValue(Type* t, std::uint32_t tag, bool value) const {
        if (!value || tag == bytecode::kTagFrame || module == nullptr || module->tasks.size() < 2) {
            return false;
        }
        const auto bits = t->getPrimitiveSizeInBits().getFixedSize();
        return (t->isIntegerTy() || t->isFloatTy() || t->isDoubleTy()) &&
               (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    }
    Value* loadAt(Type* t, Value* p, std::uint32_t tag = bytecode::kTagAbsolute, bool value = false) {
        llvm::LoadInst* i = b.CreateAlignedLoad(t, b.CreateBitCast(p, t->getPointerTo()), llvm::MaybeAlign(1));
        if (atomicValue(t, tag, value)) {
            i->setAlignment(llvm::Align(t->getPrimitiveSizeInBits().getFixedSize() / 8));
            i->setAtomic(llvm::AtomicOrdering::Unordered);
        }
        scoped(i, tag);
        return i;
    }
    llvm::StoreInst* storeAt(Value* p, Value* v, std::uint32_t tag = bytecode::kTagAbsolute, bool value = false) {
        Type* t = v->getType();
        llvm::StoreInst* i = b.CreateAlignedStore(v, b.CreateBitCast(p, t->getPointerTo()), llvm::MaybeAlign(1));
        if (atomicValue(t, tag, value)) {
            i->setAlignment(llvm::Align(t->getPrimitiveSizeInBits().getFixedSize() / 8));
            i->setAtomic(llvm::AtomicOrdering::Unordered);
        }
        scoped(i, tag);
        return i;
    }
    void scoped(llvm::Instruction* i, std::uint32_t tag) {
        if (scope[tag] != nullptr) {
            i->setMetadata(llvm::LLVMContext::MD_alias_scope, scope[tag]);
            i->setMetadata(llvm::LLVMContext::MD_noalias, noalias[tag]);
        }
    }
    [[nodiscard]] std::uint32_t tagOf(std::uint32_t k) const { return bytecode::addressTag(w(k)); }
    Value* ld(Type* t, std::uint32_t k) {
        if (Value* c = constantOperand(t, k); c != nullptr) {
            return c;
        }
        Value* v = loadAt(t, addr(k), tagOf(k), true);
        direct(v, k);
        return v;
    }
    // Records access `v` of operand k (not in a rolled segment, where its address varies).
    void direct(Value* v, std::uint32_t k) {
        auto* i = llvm::dyn_cast<llvm::Instruction>(v);
        if (i == nullptr || varies(k)) {
            return;
        }
        const std::uint64_t begin = bytecode::addressOffset(w(k));
        spans.push_back({i, tagOf(k), begin, begin + accessBytes(i), false});
    }
    // Records element access `v` of array operand `arr`, index operand `idx` (element()): every
    // element from the first to the last, `v`'s bytes of the last.
    void elementAccess(Value* v, std::uint32_t arr, std::uint32_t idx) {
        auto* i = llvm::dyn_cast<llvm::Instruction>(v);
        if (i == nullptr || varies(arr) || varies(idx + 2) || varies(idx + 3) || w(idx + 3) == 0) {
            return;
        }
        const std::uint64_t begin = bytecode::addressOffset(w(arr));
        const std::uint64_t last = begin + std::uint64_t{w(idx + 2)} * (w(idx + 3) - 1);
        spans.push_back({i, tagOf(arr), begin, last + accessBytes(i), true});
    }
    // Gives each array's element accesses (one per distinct span) an alias scope, and every
    // direct access of the same tag outside that span the scope in its noalias list. Sound
    // because within one body each tag's base is one value (the instance, the frame, the image)
    // and the bounds check keeps an element access inside its span; a dereferenced pointer
    // (its tag kTagAbsolute, no scope) and a memmove carry no such list, so they may alias
    // anything. The inliner copies scopes per call site, so an inlined body's arrays are apart
    // only from that body's own accesses. At most kScopedArrays arrays per body: the lists grow
    // with them.
    void scopeArrays() {
        constexpr std::size_t kScopedArrays = 32;
        struct Array {
            std::uint32_t tag;
            std::uint64_t begin;
            std::uint64_t end;
            llvm::MDNode* scope;
            // `s` accesses this array's elements, or its span exactly.
            [[nodiscard]] bool is(const Span& s) const { return tag == s.tag && begin == s.begin && end == s.end; }
        };
        std::vector<Array> arrays;
        llvm::MDBuilder md(cx);
        llvm::MDNode* domain = nullptr;
        for (const Span& s : spans) {
            if (!s.element || arrays.size() == kScopedArrays) {
                continue;
            }
            if (std::none_of(arrays.begin(), arrays.end(), [&s](const Array& a) { return a.is(s); })) {
                domain = domain != nullptr ? domain : md.createAnonymousAliasScopeDomain("takt.arrays");
                arrays.push_back({s.tag, s.begin, s.end, md.createAnonymousAliasScope(domain, "array")});
            }
        }
        for (const Span& s : spans) {
            std::vector<llvm::Metadata*> listed;
            for (const Array& a : arrays) {
                const bool apart = a.tag == s.tag && (s.end <= a.begin || a.end <= s.begin);
                if (s.element ? a.is(s) : apart) {
                    listed.push_back(a.scope);
                }
            }
            if (listed.empty()) {
                continue;
            }
            const unsigned kind = s.element ? llvm::LLVMContext::MD_alias_scope : llvm::LLVMContext::MD_noalias;
            s.access->setMetadata(
                kind, llvm::MDNode::concatenate(s.access->getMetadata(kind), llvm::MDNode::get(cx, listed)));
        }
    }
    static std::uint64_t accessBytes(const llvm::Instruction* i) {
        const Type* t =
            llvm::isa<llvm::StoreInst>(i) ? llvm::cast<llvm::StoreInst>(i)->getValueOperand()->getType() : i->getType();
        return t->getPrimitiveSizeInBits().getFixedSize() / 8;
    }
    // Operand k's value when it lies in the constants: nothing writes there (the verifier refuses
    // such a destination, the VM a store through a reference below constSize, the engine and the
    // agent write variables only), so the bytes are the module's initial image. LLVM then folds
    // a literal like any other, instead of loading it on every use.
    Value* constantOperand(Type* t, std::uint32_t k) {
        const std::uint64_t bytes = t->getPrimitiveSizeInBits() / 8;
        const std::optional<std::uint64_t> offset = bytes <= 8 ? constantOffset(k, bytes) : std::nullopt;
        if (!offset) {
            return nullptr;
        }
        const std::uint64_t bits = constantBits(*offset, bytes);
        if (t->isFloatTy()) {
            return llvm::ConstantFP::get(cx, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits)));
        }
        if (t->isDoubleTy()) {
            return llvm::ConstantFP::get(cx, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, bits)));
        }
        return t->isIntegerTy() ? llvm::ConstantInt::get(t, bits) : nullptr;
    }
    // The image offset of operand k when its `bytes` bytes lie in the constants (see above).
    std::optional<std::uint64_t> constantOffset(std::uint32_t k, std::uint64_t bytes) {
        if (varies(k) || bytes == 0) {
            return std::nullopt;
        }
        const std::uint32_t word = w(k);
        const std::uint64_t offset = bytecode::addressOffset(word);
        if (bytecode::addressTag(word) != bytecode::kTagAbsolute || offset + bytes > constSize ||
            offset + bytes > module->initImage.size()) {
            return std::nullopt;
        }
        return offset;
    }
    // The `bytes` (at most 8) constant bytes at `offset`, little-endian as the image holds them.
    [[nodiscard]] std::uint64_t constantBits(std::uint64_t offset, std::uint64_t bytes) const {
        std::uint64_t bits = 0;
        for (std::uint64_t i = 0; i < bytes; ++i) {
            bits |= std::uint64_t{module->initImage[offset + i]} << (8 * i);
        }
        return bits;
    }
    void st(std::uint32_t k, Value* v) { direct(storeAt(addr(k), v, tagOf(k), true), k); }
    Value* boolByte(Value* cond) { return b.CreateZExt(cond, i8()); }

    // The block of instruction `at` as a jump from this instruction reaches it: through the
    // preheader when `at` starts a fast loop this instruction is outside of.
    BasicBlock* block(std::uint32_t at) {
        if (copying != nullptr && at >= copying->loop.head && at <= copying->loop.backEdge) {
            return copying->blocks[at - copying->loop.head];
        }
        if (rolling != nullptr && at == rolling->run.start + rolling->run.length) {
            return rolling->latch;
        }
        for (const Rolled& r : rolled) {
            if (r.run.start == at && (pc < r.run.start || pc >= r.run.end())) {
                return r.entry;
            }
        }
        for (const Fast& f : fastLoops) {
            if (f.loop.head == at && (pc < f.loop.head || pc > f.loop.backEdge)) {
                return f.preheader;
            }
        }
        return (*blocks)[at];
    }
    BasicBlock* fresh(const char* name) { return BasicBlock::Create(cx, name, fn); }

    // if (cond) fault with `trap` at this instruction; continues in a new block.
    void trapIf(Value* cond, Trap trap) {
        BasicBlock* bad = fresh("trap");
        BasicBlock* ok = fresh("ok");
        b.CreateCondBr(cond, bad, ok, unlikely());
        b.SetInsertPoint(bad);
        raise(trap);
        b.SetInsertPoint(ok);
    }
    void raise(Trap trap) {
        b.CreateStore(pcValue(), b.CreateStructGEP(runContextType(), ctx, 2));
        b.CreateRet(c32(static_cast<std::uint32_t>(trap)));
    }
    llvm::MDNode* unlikely() { return llvm::MDBuilder(cx).createBranchWeights(1, 1 << 20); }
    llvm::StructType* runContextType() { return native::runContextType(cx); }

    // A back-edge or call: one tick of the budget, the abort flag on every 64th.
    Value* abortRequested() {
        llvm::LoadInst* flag = b.CreateAlignedLoad(i8(), abort, llvm::MaybeAlign(1));
        flag->setAtomic(llvm::AtomicOrdering::Monotonic);
        return b.CreateICmpNE(flag, b.getInt8(0));
    }
    // One tick; `checked` false: counted only (an unchecked copy's back-edge, fast_loops.h).
    void watchdog(bool checked = true) {
        Value* t = b.CreateSub(b.CreateLoad(i64(), ticks), c64(1));
        b.CreateStore(t, ticks);
        if (!checked) {
            return;
        }
        BasicBlock* poll = fresh("poll");
        BasicBlock* cont = fresh("cont");
        b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(t, c64(kAbortPollMask)), c64(0)), poll, cont, unlikely());
        b.SetInsertPoint(poll);
        trapIf(b.CreateICmpEQ(t, c64(0)), Trap::BudgetExceeded);
        trapIf(abortRequested(), Trap::Aborted);
        b.CreateBr(cont);
        b.SetInsertPoint(cont);
    }
    void next() { b.CreateBr(block(pc + bytecode::instructionLength(static_cast<Opcode>(code[pc])))); }
    void jump(std::uint32_t target) {
        if (target <= pc) {
            watchdog();
        }
        b.CreateBr(block(target));
    }
    // In a fast copy every back-edge is its own or that of a counted loop inside (fastLoops()).
    void loopBack(std::uint32_t target) {
        watchdog(copying == nullptr);
        b.CreateBr(block(target));
    }
    // The preheader of fast loop f: how many back-edges are left if the counter keeps its value
    // through the body (it does: fastLoops() checked), and whether the budget covers them.
    void preheader(const Fast& f) {
        pc = f.loop.backEdge;
        b.SetInsertPoint(f.preheader);
        const std::int64_t limit = f.loop.limit;
        const std::int64_t step = f.loop.step;
        Value* d = b.CreateSExt(ld(i32(), 0), i64()); // the counter, the back-edge's operand 0
        Value* limitValue = c64(static_cast<std::uint64_t>(limit));
        Value* room = step < 0 ? b.CreateSub(d, limitValue) : b.CreateSub(limitValue, d);
        const auto stride = static_cast<std::uint64_t>(step < 0 ? -step : step);
        Value* trips =
            b.CreateSelect(b.CreateICmpSLT(room, c64(0)), c64(0), b.CreateAdd(b.CreateUDiv(room, c64(stride)), c64(1)));
        // Each of the trips + 1 runs of the body takes the inner loops' back-edges, each but the
        // last the loop's own: (trips + 1) * perTrip - 1 ticks at most, which must stay below the
        // budget (the tick reaching 0 traps).
        Value* most = b.CreateMul(b.CreateAdd(trips, c64(1)), c64(f.loop.backEdgesPerTrip));
        Value* covered = b.CreateICmpULE(most, b.CreateLoad(i64(), ticks));
        Value* fast = b.CreateAnd(b.CreateICmpULE(trips, c64(f.loop.maxTrips)), covered);
        // The unchecked back-edges do not poll the abort flag, so a fast entry does: a loop around
        // this one whose ticks per round are a multiple of 64 would otherwise never see it.
        trapIf(b.CreateAnd(fast, abortRequested()), Trap::Aborted);
        b.CreateCondBr(fast, f.blocks.front(), (*blocks)[f.loop.head]);
    }
    // if (cond) jump to target else next.
    void branch(Value* cond, std::uint32_t target) {
        BasicBlock* taken = fresh("taken");
        BasicBlock* notTaken = block(pc + bytecode::instructionLength(static_cast<Opcode>(code[pc])));
        b.CreateCondBr(cond, taken, notTaken);
        b.SetInsertPoint(taken);
        jump(target);
    }
    Value* intrinsic(llvm::Intrinsic::ID id, std::initializer_list<Value*> args) {
        std::vector<Type*> types{(*args.begin())->getType()};
        return b.CreateCall(llvm::Intrinsic::getDeclaration(&mod, id, types), args);
    }
    // Overflow-checked arithmetic (the _T forms): the result, trapping Overflow.
    Value* checked(llvm::Intrinsic::ID id, Value* x, Value* y) {
        Value* pair = intrinsic(id, {x, y});
        trapIf(b.CreateExtractValue(pair, 1), Trap::Overflow);
        return b.CreateExtractValue(pair, 0);
    }
    // Division and remainder of an unsigned 32-bit value by a constant. The verifier holds an
    // instruction's reciprocal operand to the one of its divisor (bytecode::divisorReciprocal),
    // with which the interpreter's quotient and remainder are exact, so LLVM's own division by
    // the constant gives the same values, in 32-bit code it can vectorise (the reciprocal's
    // 128-bit product vectorised badly: timers_edges' input loop ran slower vectorised).
    Value* divBy(Value* n32, std::uint32_t d) { return b.CreateUDiv(n32, c32(d)); }
    Value* modBy(Value* n32, std::uint32_t d) { return b.CreateURem(n32, c32(d)); }
    Value* magnitude(Value* a) { // |a| as u32 (INT_MIN gives 2^31)
        return b.CreateSelect(b.CreateICmpSLT(a, c32(0)), b.CreateSub(c32(0), a), a);
    }
    Value* negIf(Value* cond, Value* v) { return b.CreateSelect(cond, b.CreateSub(c32(0), v), v); }

    // The element of an array access (LDX_*, STX_*, ADDX_*): operand `arr` is the array, `idx`
    // the index followed by the lower bound, the element size and the count.
    Value* element(std::uint32_t arr, std::uint32_t idx) {
        Value* rel = b.CreateSub(b.CreateSExt(ld(i32(), idx), i64()),
                                 c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(imm32(idx + 1)))));
        trapIf(b.CreateICmpUGE(rel, c64(w(idx + 3))), Trap::ArrayBounds);
        return b.CreateInBoundsGEP(i8(), addr(arr), b.CreateMul(rel, c64(w(idx + 2))));
    }
    // The image address of a dereference: [operand k] + c, checked as the interpreter's LDI /
    // STI (NullReference for 0; InvalidReference outside the image or, for a store, in the
    // constants).
    Value* deref(std::uint32_t k, std::uint64_t add, std::uint64_t bytes, bool forStore) {
        Value* p = ld(i32(), k);
        trapIf(b.CreateICmpEQ(p, c32(0)), Trap::NullReference);
        Value* at = b.CreateAdd(b.CreateZExt(p, i64()), c64(add));
        Value* bad = b.CreateICmpUGT(b.CreateAdd(at, c64(bytes)), stackEnd);
        if (forStore) {
            bad = b.CreateOr(bad, b.CreateICmpULT(at, c64(constSize)));
        }
        trapIf(bad, Trap::InvalidReference);
        return b.CreateInBoundsGEP(i8(), image, at);
    }
    void copy(Value* dst, Value* src, std::uint32_t n) {
        b.CreateMemMove(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), c64(n));
    }
    // COPY of operand `from` to `to`: when the source is a short run of the constants (literal
    // inputs of a call, copied in one block by the compiler), the bytes are stored as immediates,
    // so LLVM folds them into the code that reads them (a memmove from the image hides them).
    void copyOperand(std::uint32_t to, std::uint32_t from, std::uint32_t n) {
        constexpr std::uint32_t kMaxImmediateCopy = 64;
        const std::optional<std::uint64_t> offset = n <= kMaxImmediateCopy ? constantOffset(from, n) : std::nullopt;
        if (!offset) {
            copy(addr(to), addr(from), n);
            return;
        }
        Value* dst = addr(to);
        for (std::uint32_t at = 0; at < n;) {
            const std::uint32_t chunk = n - at >= 8 ? 8 : n - at >= 4 ? 4 : n - at >= 2 ? 2 : 1;
            Value* bits = llvm::ConstantInt::get(b.getIntNTy(8 * chunk), constantBits(*offset + at, chunk));
            storeAt(b.CreateConstInBoundsGEP1_64(i8(), dst, at), bits, tagOf(to));
            at += chunk;
        }
    }
    // --- calls ---
    // The budget lives in the RunContext across a call, so the callee charges the same ticks.
    void ticksOut() { b.CreateStore(b.CreateLoad(i64(), ticks), b.CreateStructGEP(runContextType(), ctx, 0)); }
    void ticksIn() { b.CreateStore(b.CreateLoad(i64(), b.CreateStructGEP(runContextType(), ctx, 0)), ticks); }
    // Host function `slot` (native::Host's order: vm first, then the functions).
    enum HostSlot : unsigned {
        kCallNative = 1,
        kDispatch,
        kMoveString,
        kCompareStrings,
        kValuesEqual,
        kAssertFailed,
        kHostSlots
    };
    static_assert(kHostSlots * sizeof(void*) == sizeof(Host));
    Value* hostCall(HostSlot slot, Type* result, std::initializer_list<Value*> args) {
        Type* ptr = i8()->getPointerTo();
        Value* host = b.CreateLoad(ptr, b.CreateStructGEP(runContextType(), ctx, 3));
        Value* fields = b.CreateBitCast(host, ptr->getPointerTo());
        std::vector<Value*> all{b.CreateLoad(ptr, fields), image};
        std::vector<Type*> params{ptr, ptr};
        for (Value* a : args) {
            all.push_back(a);
            params.push_back(a->getType());
        }
        llvm::FunctionType* type = llvm::FunctionType::get(result, params, false);
        Value* fnPtr = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fields, slot));
        llvm::CallInst* call = b.CreateCall(type, b.CreateBitCast(fnPtr, type->getPointerTo()), all);
        call->addFnAttr(llvm::Attribute::NoUnwind);
        return call;
    }
    Value* constPointer(const void* p, Type* type) {
        return b.CreateIntToPtr(c64(reinterpret_cast<std::uintptr_t>(p)), type);
    }
    // The interpreter's ENTER: StackOverflow past kMaxCallDepth or the stack's end, one watchdog
    // tick, then the body (`callee`, or the function pointer `calleePtr` for a dispatched call)
    // with this := thisOff and frame := frame + c; a trap in the callee returns at once (the
    // callee stored its own instruction).
    void enter(Value* calleePtr, Value* frameSize, Value* thisOff, std::uint32_t c) {
        Value* nf = b.CreateAdd(b.CreateZExt(frameOffset, i64()), c64(c));
        Value* deep = b.CreateICmpUGE(depth, c32(bytecode::kMaxCallDepth));
        Value* past = b.CreateICmpUGT(b.CreateAdd(nf, b.CreateZExt(frameSize, i64())), stackEnd);
        trapIf(b.CreateOr(deep, past), Trap::StackOverflow);
        watchdog();
        ticksOut();
        llvm::FunctionType* type = fn->getFunctionType();
        Value* target = b.CreateBitCast(calleePtr, type->getPointerTo());
        llvm::CallInst* call =
            b.CreateCall(type, target, {image, thisOff, b.CreateTrunc(nf, i32()), ctx, b.CreateAdd(depth, c32(1))});
        call->addFnAttr(llvm::Attribute::NoUnwind);
        ticksIn();
        BasicBlock* failed = fresh("callee-trap");
        BasicBlock* ok = fresh("returned");
        b.CreateCondBr(b.CreateICmpNE(call, c32(0)), failed, ok, unlikely());
        b.SetInsertPoint(failed);
        b.CreateRet(call);
        b.SetInsertPoint(ok);
        next();
    }
    void enterPou(std::uint32_t p, Value* thisOff, std::uint32_t c) {
        const bytecode::PouKind kind = module->pous[p].kind;
        if (kind != bytecode::PouKind::FunctionBlock && kind != bytecode::PouKind::Program) {
            frameEscapes = true; // a FUNCTION's or METHOD's arguments are written into its frame
        }
        llvm::Function* callee = bodyOf(p);
        if (callee == nullptr) {
            raise(Trap::InvalidCall);
            return;
        }
        enter(callee, c32(module->pous[p].frameSize), thisOff, c);
    }
    // A call of FB or METHOD p on the instance at image offset `inst`: a native FB runs in C++.
    // `at`: the instance as a pointer when the operand names it (image + base + offset, the form
    // the body's own accesses have, so LLVM sees an FB's members apart from the caller's other
    // variables); null for one reached through a reference.
    void callInstance(std::uint32_t p, Value* inst, std::uint32_t c, Value* at = nullptr) {
        if (module->pous[p].native != bytecode::kNone) {
            // The interpreter's C++ called directly, its layout as a constant and the running
            // Vm's context from the RunContext (compile() refused the module when it has no
            // DirectFb for p), or with the standard FBs' bitcode linked in, the FB's copy for
            // this layout (standard_fbs.h), which LLVM inlines like any small function.
            const DirectFb& d = directFbs[p];
            Value* instance = at != nullptr ? at : b.CreateInBoundsGEP(i8(), image, b.CreateZExt(inst, i64()));
            llvm::Function* copy = standardFbs != nullptr ? standardFbs->forInstance(d) : nullptr;
            if (copy != nullptr) {
                Value* context = b.CreateBitCast(fbContext, copy->getArg(0)->getType());
                b.CreateCall(copy, {context, instance})->addFnAttr(llvm::Attribute::NoUnwind);
            } else {
                Type* ptr = i8()->getPointerTo();
                llvm::FunctionType* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr}, false);
                b.CreateCall(type, constPointer(d.fn, type->getPointerTo()),
                             {fbContext, instance, constPointer(d.layout, ptr)})
                    ->addFnAttr(llvm::Attribute::NoUnwind);
            }
            next();
            return;
        }
        enterPou(p, inst, c);
    }
    // A dispatched call: the Vm picks the POU (kNone: InvalidCall), the tables give its body.
    void callDispatched(Value* inst, std::uint32_t slot, std::uint32_t c) {
        frameEscapes = true; // a METHOD: its arguments are in its frame
        Value* p = hostCall(kDispatch, i32(), {inst, c32(slot)});
        trapIf(b.CreateICmpEQ(p, c32(bytecode::kNone)), Trap::InvalidCall);
        Value* index[] = {c32(0), p};
        Value* body =
            b.CreateLoad(i8()->getPointerTo(), b.CreateInBoundsGEP(bodyTable->getValueType(), bodyTable, index));
        trapIf(b.CreateIsNull(body), Trap::InvalidCall);
        Value* frameSize = b.CreateLoad(i32(), b.CreateInBoundsGEP(frameTable->getValueType(), frameTable, index));
        enter(body, frameSize, inst, c);
    }
    // A Trap code a host function returned: fault with it at this instruction unless None.
    void trapIfCode(Value* t) {
        BasicBlock* bad = fresh("trap");
        BasicBlock* ok = fresh("ok");
        b.CreateCondBr(b.CreateICmpNE(t, c32(0)), bad, ok, unlikely());
        b.SetInsertPoint(bad);
        b.CreateStore(pcValue(), b.CreateStructGEP(runContextType(), ctx, 2));
        b.CreateRet(t);
        b.SetInsertPoint(ok);
    }
    void signedDivMod(Type* t, bool divide) {
        Value* a = ld(t, 1);
        Value* d = ld(t, 2);
        Value* zero = llvm::ConstantInt::get(t, 0);
        Value* minusOne = b.CreateICmpEQ(d, llvm::ConstantInt::getAllOnesValue(t));
        trapIf(b.CreateICmpEQ(d, zero), Trap::DivByZero);
        if (divide) {
            const unsigned bits = t->getIntegerBitWidth();
            trapIf(b.CreateAnd(b.CreateICmpEQ(a, b.getInt(llvm::APInt::getSignedMinValue(bits))), minusOne),
                   Trap::Overflow);
            st(0, b.CreateSDiv(a, d));
        } else {
            st(0, b.CreateSelect(minusOne, zero,
                                 b.CreateSRem(a, b.CreateSelect(minusOne, llvm::ConstantInt::get(t, 1), d))));
        }
        next();
    }
    void unsignedDivMod(Type* t, bool divide) {
        Value* d = ld(t, 2);
        trapIf(b.CreateICmpEQ(d, llvm::ConstantInt::get(t, 0)), Trap::DivByZero);
        Value* a = ld(t, 1);
        st(0, divide ? b.CreateUDiv(a, d) : b.CreateURem(a, d));
        next();
    }
    // rotl8 / rotl16 of the interpreter: v and n masked to the width, the result too.
    Value* rotateLeftNarrow(Value* v, Value* n, std::uint32_t width) {
        const std::uint32_t mask = (1u << width) - 1;
        v = b.CreateAnd(v, c32(mask));
        n = b.CreateAnd(n, c32(width - 1));
        Value* back = b.CreateAnd(b.CreateSub(c32(width), n), c32(width - 1));
        return b.CreateAnd(b.CreateOr(b.CreateShl(v, n), b.CreateLShr(v, back)), c32(mask));
    }
    Value* rightAsLeft(Value* n, std::uint32_t width) { // rotr(v, n) = rotl(v, (w - n mod w) mod w)
        return b.CreateAnd(b.CreateSub(c32(width), b.CreateAnd(n, c32(width - 1))), c32(width - 1));
    }
    // roundToInt / truncToInt of the interpreter: nearbyint (or trunc) in the source type, NaN
    // gives 0, at or past a bound (converted to the source type) gives the bound.
    Value* realToInt(Value* x, Type* to, double lo, double hi, bool truncate, bool isSigned = true) {
        Type* from = x->getType();
        Value* r = intrinsic(truncate ? llvm::Intrinsic::trunc : llvm::Intrinsic::nearbyint, {x});
        Value* loF = llvm::ConstantFP::get(from, lo);
        Value* hiF = llvm::ConstantFP::get(from, hi);
        const unsigned bits = to->getIntegerBitWidth();
        Value* loI = b.getInt(isSigned ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt(bits, 0));
        Value* hiI = b.getInt(isSigned ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getMaxValue(bits));
        // The conversion is computed only where it is defined (fptosi of an out-of-range value is poison).
        Value* inRange = b.CreateAnd(b.CreateFCmpOLT(r, hiF), b.CreateFCmpOGT(r, loF));
        Value* safe = b.CreateSelect(inRange, r, llvm::ConstantFP::get(from, 0.0));
        Value* conv = isSigned ? b.CreateFPToSI(safe, to) : b.CreateFPToUI(safe, to);
        Value* v = b.CreateSelect(b.CreateFCmpOGE(r, hiF), hiI, b.CreateSelect(b.CreateFCmpOLE(r, loF), loI, conv));
        return b.CreateSelect(b.CreateFCmpUNO(x, x), llvm::ConstantInt::get(to, 0), v);
    }
    // A call of the libm function the interpreter calls, which LLVM must neither fold nor
    // rewrite (nobuiltin): it folds a float function on a constant by computing in double and
    // rounding, one bit off libm's tanf(-2.5f), and may turn powf(2, x) into exp2f. Declared
    // without side effects (the errno it may set is never read), so calls still move and merge.
    Value* libm(const char* name, Type* t, std::initializer_list<Value*> args) {
        std::vector<Type*> params(args.size(), t);
        llvm::FunctionCallee f = mod.getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
        if (auto* decl = llvm::dyn_cast<llvm::Function>(f.getCallee()); decl != nullptr) {
            decl->setDoesNotAccessMemory();
            decl->setDoesNotThrow();
            decl->setWillReturn();
        }
        llvm::CallInst* call = b.CreateCall(f, args);
        call->addFnAttr(llvm::Attribute::NoBuiltin);
        return call;
    }
};

// One specialisation per translated opcode; the rest keep kSupported = false.
template <Opcode op> struct Op {
    static constexpr bool kSupported = false;
    static void emit(Emitter& /*e*/) {}
};

#define OP(name)                                                                                                       \
    template <> struct Op<Opcode::name> {                                                                              \
        static constexpr bool kSupported = true;                                                                       \
        static void emit(Emitter& e);                                                                                  \
    };                                                                                                                 \
    void Op<Opcode::name>::emit(Emitter& e)

// d := expr(a, b) over type T (the interpreter's BIN / UN / CMP).
#define BIN(name, T, expr)                                                                                             \
    OP(name) {                                                                                                         \
        auto& B = e.b;                                                                                                 \
        Value* a = e.ld(e.T(), 1);                                                                                     \
        Value* b = e.ld(e.T(), 2);                                                                                     \
        (void)B;                                                                                                       \
        e.st(0, expr);                                                                                                 \
        e.next();                                                                                                      \
    }
#define UN(name, TS, expr)                                                                                             \
    OP(name) {                                                                                                         \
        auto& B = e.b;                                                                                                 \
        Value* a = e.ld(e.TS(), 1);                                                                                    \
        (void)B;                                                                                                       \
        e.st(0, expr);                                                                                                 \
        e.next();                                                                                                      \
    }
#define CMP(name, T, pred) BIN(name, T, e.boolByte(B.CreateCmp(llvm::CmpInst::pred, a, b)))
#define JCMP(name, T, pred)                                                                                            \
    OP(name) {                                                                                                         \
        e.branch(e.b.CreateCmp(llvm::CmpInst::pred, e.ld(e.T(), 0), e.ld(e.T(), 1)), e.w(2));                          \
    }
#define JCMPI(name, pred)                                                                                              \
    OP(name) {                                                                                                         \
        e.branch(e.b.CreateCmp(llvm::CmpInst::pred, e.ld(e.i32(), 0), e.c32(e.w(1))), e.w(2));                         \
    }
#define BIN_T(name, T, id) BIN(name, T, e.checked(llvm::Intrinsic::id, a, b))

// --- control ---
OP(NOP) {
    e.next();
}
OP(RET) {
    e.ticksOut();
    e.b.CreateRet(e.c32(0));
}
OP(JMP) {
    e.jump(e.w(0));
}
OP(JMP_T) {
    e.branch(e.b.CreateICmpNE(e.ld(e.i8(), 0), e.b.getInt8(0)), e.w(1));
}
OP(JMP_F) {
    e.branch(e.b.CreateICmpEQ(e.ld(e.i8(), 0), e.b.getInt8(0)), e.w(1));
}
JCMP(JEQ_I32, i32, ICMP_EQ)
JCMP(JNE_I32, i32, ICMP_NE)
JCMP(JLT_I32, i32, ICMP_SLT)
JCMP(JLE_I32, i32, ICMP_SLE)
JCMP(JGT_I32, i32, ICMP_SGT)
JCMP(JGE_I32, i32, ICMP_SGE)
JCMP(JEQ_I64, i64, ICMP_EQ)
JCMP(JNE_I64, i64, ICMP_NE)
JCMP(JLT_I64, i64, ICMP_SLT)
JCMP(JLE_I64, i64, ICMP_SLE)
JCMP(JGT_I64, i64, ICMP_SGT)
JCMP(JGE_I64, i64, ICMP_SGE)
JCMPI(JLT_I32_IMM, ICMP_SLT)
JCMPI(JLE_I32_IMM, ICMP_SLE)
JCMPI(JGT_I32_IMM, ICMP_SGT)
JCMPI(JGE_I32_IMM, ICMP_SGE)
JCMPI(JEQ_I32_IMM, ICMP_EQ)
JCMPI(JNE_I32_IMM, ICMP_NE)
// NaN: = < <= are ordered (false), <> and the negated forms are unordered (true), as in C++.
JCMP(JEQ_F32, f32, FCMP_OEQ)
JCMP(JNE_F32, f32, FCMP_UNE)
JCMP(JLT_F32, f32, FCMP_OLT)
JCMP(JLE_F32, f32, FCMP_OLE)
JCMP(JNLT_F32, f32, FCMP_UGE)
JCMP(JNLE_F32, f32, FCMP_UGT)
JCMP(JEQ_F64, f64, FCMP_OEQ)
JCMP(JNE_F64, f64, FCMP_UNE)
JCMP(JLT_F64, f64, FCMP_OLT)
JCMP(JLE_F64, f64, FCMP_OLE)
JCMP(JNLT_F64, f64, FCMP_UGE)
JCMP(JNLE_F64, f64, FCMP_UGT)
OP(CHK_STEP_I32) {
    e.trapIf(e.b.CreateICmpEQ(e.ld(e.i32(), 0), e.c32(0)), Trap::ForStepZero);
    e.next();
}
OP(CHK_STEP_I64) {
    e.trapIf(e.b.CreateICmpEQ(e.ld(e.i64(), 0), e.c64(0)), Trap::ForStepZero);
    e.next();
}
OP(CHKR_I32) {
    Value* v = e.ld(e.i32(), 0);
    e.trapIf(e.b.CreateOr(e.b.CreateICmpSLT(v, e.c32(e.w(1))), e.b.CreateICmpSGT(v, e.c32(e.w(2)))), Trap::Overflow);
    e.next();
}
OP(CHKR_U32) {
    Value* v = e.ld(e.i32(), 0);
    e.trapIf(e.b.CreateOr(e.b.CreateICmpULT(v, e.c32(e.w(1))), e.b.CreateICmpUGT(v, e.c32(e.w(2)))), Trap::Overflow);
    e.next();
}
OP(CHKR_I64) {
    Value* v = e.ld(e.i64(), 0);
    e.trapIf(e.b.CreateOr(e.b.CreateICmpSLT(v, e.c64(e.imm64(1))), e.b.CreateICmpSGT(v, e.c64(e.imm64(3)))),
             Trap::Overflow);
    e.next();
}
OP(TRAP) {
    const std::uint32_t t = e.w(0);
    e.raise(bytecode::raisableByTrap(t) ? static_cast<Trap>(t) : Trap::InvalidOpcode);
}

// --- moves ---
OP(MOV_8) {
    e.st(0, e.ld(e.i8(), 1));
    e.next();
}
OP(MOV_16) {
    e.st(0, e.ld(e.i16(), 1));
    e.next();
}
OP(MOV_32) {
    e.st(0, e.ld(e.i32(), 1));
    e.next();
}
OP(MOV_64) {
    e.st(0, e.ld(e.i64(), 1));
    e.next();
}
OP(MOVI_8) {
    e.st(0, e.b.CreateTrunc(e.imm32Value(1), e.i8()));
    e.next();
}
OP(MOVI_16) {
    e.st(0, e.b.CreateTrunc(e.imm32Value(1), e.i16()));
    e.next();
}
OP(MOVI_32) {
    e.st(0, e.imm32Value(1));
    e.next();
}
OP(MOVI_64) {
    e.st(0, e.imm64Value(1));
    e.next();
}
OP(COPY) {
    e.copyOperand(0, 1, e.w(2));
    e.next();
}
OP(ZERO) {
    e.b.CreateMemSet(e.addr(0), e.b.getInt8(0), e.c64(e.w(1)), llvm::MaybeAlign(1));
    e.next();
}
OP(ADDR) {
    e.st(0, e.offsetOf(1));
    e.next();
}
UN(SX_8_32, i8, B.CreateSExt(a, e.i32()))
UN(ZX_8_32, i8, B.CreateZExt(a, e.i32()))
UN(SX_16_32, i16, B.CreateSExt(a, e.i32()))
UN(ZX_16_32, i16, B.CreateZExt(a, e.i32()))
UN(SX_32_64, i32, B.CreateSExt(a, e.i64()))
UN(ZX_32_64, i32, B.CreateZExt(a, e.i64()))
UN(TO_BOOL_32, i32, e.boolByte(B.CreateICmpNE(a, e.c32(0))))
UN(TO_BOOL_64, i64, e.boolByte(B.CreateICmpNE(a, e.c64(0))))

// --- integer arithmetic (wrapping: LLVM's add/sub/mul without nsw/nuw wrap) ---
BIN(ADD_I32, i32, B.CreateAdd(a, b))
BIN(SUB_I32, i32, B.CreateSub(a, b))
BIN(MUL_I32, i32, B.CreateMul(a, b))
// Division and MOD, both widths: DivByZero; INT_MIN / -1 is Overflow; x MOD -1 gives 0 without
// the division (INT_MIN MOD -1 would fault in hardware).
#define DIVMOD(width)                                                                                                  \
    OP(DIV_I##width) {                                                                                                 \
        e.signedDivMod(e.i##width(), true);                                                                            \
    }                                                                                                                  \
    OP(MOD_I##width) {                                                                                                 \
        e.signedDivMod(e.i##width(), false);                                                                           \
    }                                                                                                                  \
    OP(DIV_U##width) {                                                                                                 \
        e.unsignedDivMod(e.i##width(), true);                                                                          \
    }                                                                                                                  \
    OP(MOD_U##width) {                                                                                                 \
        e.unsignedDivMod(e.i##width(), false);                                                                         \
    }
DIVMOD(32)
DIVMOD(64)
UN(NEG_I32, i32, B.CreateSub(e.c32(0), a))
UN(ABS_I32, i32, e.magnitude(a))
OP(ADD_I32_IMM) {
    e.st(0, e.b.CreateAdd(e.ld(e.i32(), 1), e.c32(e.w(2))));
    e.next();
}
OP(MUL_I32_IMM) {
    e.st(0, e.b.CreateMul(e.ld(e.i32(), 1), e.c32(e.w(2))));
    e.next();
}
BIN(ADD_I64, i64, B.CreateAdd(a, b))
BIN(SUB_I64, i64, B.CreateSub(a, b))
BIN(MUL_I64, i64, B.CreateMul(a, b))
UN(NEG_I64, i64, B.CreateSub(e.c64(0), a))
UN(ABS_I64, i64, B.CreateSelect(B.CreateICmpSLT(a, e.c64(0)), B.CreateSub(e.c64(0), a), a))
OP(ADD_I64_IMM) {
    e.st(0, e.b.CreateAdd(e.ld(e.i64(), 1), e.c64(e.imm64(2))));
    e.next();
}
BIN_T(ADD_I32_T, i32, sadd_with_overflow)
BIN_T(SUB_I32_T, i32, ssub_with_overflow)
BIN_T(MUL_I32_T, i32, smul_with_overflow)
BIN_T(ADD_U32_T, i32, uadd_with_overflow)
BIN_T(SUB_U32_T, i32, usub_with_overflow)
BIN_T(MUL_U32_T, i32, umul_with_overflow)
BIN_T(ADD_I64_T, i64, sadd_with_overflow)
BIN_T(SUB_I64_T, i64, ssub_with_overflow)
BIN_T(MUL_I64_T, i64, smul_with_overflow)
BIN_T(ADD_U64_T, i64, uadd_with_overflow)
BIN_T(SUB_U64_T, i64, usub_with_overflow)
BIN_T(MUL_U64_T, i64, umul_with_overflow)
UN(NEG_I32_T, i32, e.checked(llvm::Intrinsic::ssub_with_overflow, e.c32(0), a))
UN(NEG_I64_T, i64, e.checked(llvm::Intrinsic::ssub_with_overflow, e.c64(0), a))

// --- floating point (no fast-math flags: IEEE results in source order, no contraction) ---
BIN(ADD_F32, f32, B.CreateFAdd(a, b))
BIN(SUB_F32, f32, B.CreateFSub(a, b))
BIN(MUL_F32, f32, B.CreateFMul(a, b))
BIN(DIV_F32, f32, B.CreateFDiv(a, b))
UN(NEG_F32, f32, B.CreateFNeg(a))
UN(ABS_F32, f32, e.intrinsic(llvm::Intrinsic::fabs, {a}))
BIN(ADD_F64, f64, B.CreateFAdd(a, b))
BIN(SUB_F64, f64, B.CreateFSub(a, b))
BIN(MUL_F64, f64, B.CreateFMul(a, b))
BIN(DIV_F64, f64, B.CreateFDiv(a, b))
UN(NEG_F64, f64, B.CreateFNeg(a))
UN(ABS_F64, f64, e.intrinsic(llvm::Intrinsic::fabs, {a}))
UN(SQRT_F32, f32, e.intrinsic(llvm::Intrinsic::sqrt, {a}))
UN(SQRT_F64, f64, e.intrinsic(llvm::Intrinsic::sqrt, {a}))
BIN(ATAN2_F32, f32, e.libm("atan2f", e.f32(), {a, b}))
BIN(ATAN2_F64, f64, e.libm("atan2", e.f64(), {a, b}))

// MATH_*: the same libm functions the interpreter calls (std::sin of a float is sinf).
constexpr std::array<const char*, bytecode::kMathFnCount> kMathF64 = {"log", "log10", "exp",  "sin", "cos",
                                                                      "tan", "asin",  "acos", "atan"};
constexpr std::array<const char*, bytecode::kMathFnCount> kMathF32 = {"logf", "log10f", "expf",  "sinf", "cosf",
                                                                      "tanf", "asinf",  "acosf", "atanf"};
OP(MATH_F32) {
    const std::uint32_t f = e.w(2);
    Value* a = e.ld(e.f32(), 1);
    e.st(0, f < kMathF32.size() ? e.libm(kMathF32[f], e.f32(), {a}) : llvm::ConstantFP::getNaN(e.f32()));
    e.next();
}
OP(MATH_F64) {
    const std::uint32_t f = e.w(2);
    Value* a = e.ld(e.f64(), 1);
    e.st(0, f < kMathF64.size() ? e.libm(kMathF64[f], e.f64(), {a}) : llvm::ConstantFP::getNaN(e.f64()));
    e.next();
}

CMP(EQ_I32, i32, ICMP_EQ)
CMP(NE_I32, i32, ICMP_NE)
CMP(LT_I32, i32, ICMP_SLT)
CMP(LE_I32, i32, ICMP_SLE)
CMP(GT_I32, i32, ICMP_SGT)
CMP(GE_I32, i32, ICMP_SGE)
CMP(LT_U32, i32, ICMP_ULT)
CMP(LE_U32, i32, ICMP_ULE)
CMP(GT_U32, i32, ICMP_UGT)
CMP(GE_U32, i32, ICMP_UGE)
CMP(EQ_I64, i64, ICMP_EQ)
CMP(NE_I64, i64, ICMP_NE)
CMP(LT_I64, i64, ICMP_SLT)
CMP(LE_I64, i64, ICMP_SLE)
CMP(GT_I64, i64, ICMP_SGT)
CMP(GE_I64, i64, ICMP_SGE)
CMP(LT_U64, i64, ICMP_ULT)
CMP(LE_U64, i64, ICMP_ULE)
CMP(GT_U64, i64, ICMP_UGT)
CMP(GE_U64, i64, ICMP_UGE)
CMP(EQ_F32, f32, FCMP_OEQ)
CMP(NE_F32, f32, FCMP_UNE)
CMP(LT_F32, f32, FCMP_OLT)
CMP(LE_F32, f32, FCMP_OLE)
CMP(GT_F32, f32, FCMP_OGT)
CMP(GE_F32, f32, FCMP_OGE)
CMP(EQ_F64, f64, FCMP_OEQ)
CMP(NE_F64, f64, FCMP_UNE)
CMP(LT_F64, f64, FCMP_OLT)
CMP(LE_F64, f64, FCMP_OLE)
CMP(GT_F64, f64, FCMP_OGT)
CMP(GE_F64, f64, FCMP_OGE)
// MIN(a, b) = b < a ? b : a and MAX(a, b) = a < b ? b : a, as the interpreter (which operand
// a NaN or a signed zero yields follows from that).
BIN(MIN_I32, i32, B.CreateSelect(B.CreateICmpSLT(b, a), b, a))
BIN(MAX_I32, i32, B.CreateSelect(B.CreateICmpSLT(a, b), b, a))
BIN(MIN_U32, i32, B.CreateSelect(B.CreateICmpULT(b, a), b, a))
BIN(MAX_U32, i32, B.CreateSelect(B.CreateICmpULT(a, b), b, a))
BIN(MIN_I64, i64, B.CreateSelect(B.CreateICmpSLT(b, a), b, a))
BIN(MAX_I64, i64, B.CreateSelect(B.CreateICmpSLT(a, b), b, a))
BIN(MIN_U64, i64, B.CreateSelect(B.CreateICmpULT(b, a), b, a))
BIN(MAX_U64, i64, B.CreateSelect(B.CreateICmpULT(a, b), b, a))
BIN(MIN_F32, f32, B.CreateSelect(B.CreateFCmpOLT(b, a), b, a))
BIN(MAX_F32, f32, B.CreateSelect(B.CreateFCmpOLT(a, b), b, a))
BIN(MIN_F64, f64, B.CreateSelect(B.CreateFCmpOLT(b, a), b, a))
BIN(MAX_F64, f64, B.CreateSelect(B.CreateFCmpOLT(a, b), b, a))
BIN(AND_B, i8, e.boolByte(B.CreateAnd(B.CreateICmpNE(a, B.getInt8(0)), B.CreateICmpNE(b, B.getInt8(0)))))
BIN(OR_B, i8, e.boolByte(B.CreateOr(B.CreateICmpNE(a, B.getInt8(0)), B.CreateICmpNE(b, B.getInt8(0)))))
BIN(XOR_B, i8, e.boolByte(B.CreateXor(B.CreateICmpNE(a, B.getInt8(0)), B.CreateICmpNE(b, B.getInt8(0)))))
UN(NOT_B, i8, e.boolByte(B.CreateICmpEQ(a, B.getInt8(0))))
BIN(AND_32, i32, B.CreateAnd(a, b))
BIN(OR_32, i32, B.CreateOr(a, b))
BIN(XOR_32, i32, B.CreateXor(a, b))
UN(NOT_32, i32, B.CreateNot(a))
BIN(AND_64, i64, B.CreateAnd(a, b))
BIN(OR_64, i64, B.CreateOr(a, b))
BIN(XOR_64, i64, B.CreateXor(a, b))
UN(NOT_64, i64, B.CreateNot(a))
// A shift by the width or more gives 0 (LLVM's shift would be poison): the count is clamped
// before the shift and the result selected after it.
BIN(SHL_32, i32, B.CreateSelect(B.CreateICmpUGE(b, e.c32(32)), e.c32(0), B.CreateShl(a, B.CreateAnd(b, e.c32(31)))))
BIN(SHR_32, i32, B.CreateSelect(B.CreateICmpUGE(b, e.c32(32)), e.c32(0), B.CreateLShr(a, B.CreateAnd(b, e.c32(31)))))
OP(SHL_64) {
    Value* a = e.ld(e.i64(), 1);
    Value* n = e.ld(e.i32(), 2);
    Value* s = e.b.CreateZExt(e.b.CreateAnd(n, e.c32(63)), e.i64());
    e.st(0, e.b.CreateSelect(e.b.CreateICmpUGE(n, e.c32(64)), e.c64(0), e.b.CreateShl(a, s)));
    e.next();
}
OP(SHR_64) {
    Value* a = e.ld(e.i64(), 1);
    Value* n = e.ld(e.i32(), 2);
    Value* s = e.b.CreateZExt(e.b.CreateAnd(n, e.c32(63)), e.i64());
    e.st(0, e.b.CreateSelect(e.b.CreateICmpUGE(n, e.c32(64)), e.c64(0), e.b.CreateLShr(a, s)));
    e.next();
}

// --- conversions (integer to REAL rounds to nearest, as the C++ conversions) ---
UN(I32_TO_F32, i32, B.CreateSIToFP(a, e.f32()))
UN(I32_TO_F64, i32, B.CreateSIToFP(a, e.f64()))
UN(U32_TO_F32, i32, B.CreateUIToFP(a, e.f32()))
UN(U32_TO_F64, i32, B.CreateUIToFP(a, e.f64()))
UN(I64_TO_F32, i64, B.CreateSIToFP(a, e.f32()))
UN(I64_TO_F64, i64, B.CreateSIToFP(a, e.f64()))
UN(U64_TO_F32, i64, B.CreateUIToFP(a, e.f32()))
UN(U64_TO_F64, i64, B.CreateUIToFP(a, e.f64()))
UN(F32_TO_F64, f32, B.CreateFPExt(a, e.f64()))
UN(F64_TO_F32, f64, B.CreateFPTrunc(a, e.f32()))

// --- arrays by a run-time subscript ---
OP(IDX) {
    Value* rel = e.b.CreateSub(e.b.CreateSExt(e.ld(e.i32(), 2), e.i64()),
                               e.c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.imm32(3)))));
    e.trapIf(e.b.CreateICmpUGE(rel, e.c64(e.w(5))), Trap::ArrayBounds);
    e.st(0, e.b.CreateAdd(e.offsetOf(1), e.b.CreateMul(e.b.CreateTrunc(rel, e.i32()), e.c32(e.w(4)))));
    e.next();
}
#define LDX(name, TS, conv)                                                                                            \
    OP(name) {                                                                                                         \
        auto& B = e.b;                                                                                                 \
        Value* a = e.loadAt(e.TS(), e.element(1, 2), e.tagOf(1), true);                                                \
        e.elementAccess(a, 1, 2);                                                                                      \
        (void)B;                                                                                                       \
        e.st(0, conv);                                                                                                 \
        e.next();                                                                                                      \
    }
LDX(LDX_8, i8, a)
LDX(LDX_16, i16, a)
LDX(LDX_32, i32, a)
LDX(LDX_64, i64, a)
LDX(LDX_S8, i8, B.CreateSExt(a, e.i32()))
LDX(LDX_U8, i8, B.CreateZExt(a, e.i32()))
LDX(LDX_S16, i16, B.CreateSExt(a, e.i32()))
LDX(LDX_U16, i16, B.CreateZExt(a, e.i32()))
#define STX(name, T)                                                                                                   \
    OP(name) {                                                                                                         \
        Value* p = e.element(1, 2);                                                                                    \
        e.elementAccess(e.storeAt(p, e.ld(e.T(), 0), e.tagOf(1), true), 1, 2);                                         \
        e.next();                                                                                                      \
    }
STX(STX_8, i8)
STX(STX_16, i16)
STX(STX_32, i32)
STX(STX_64, i64)
OP(LDX_N) {
    e.copy(e.addr(0), e.element(1, 2), e.w(4));
    e.next();
}
OP(STX_N) {
    Value* p = e.element(1, 2);
    e.copy(p, e.addr(0), e.w(4));
    e.next();
}
#define ADDX(name, T, add)                                                                                             \
    OP(name) {                                                                                                         \
        Value* p = e.element(1, 2);                                                                                    \
        Value* a = e.ld(e.T(), 6);                                                                                     \
        Value* x = e.loadAt(e.T(), p, e.tagOf(1), true);                                                               \
        e.elementAccess(x, 1, 2);                                                                                      \
        e.st(0, e.b.add(a, x));                                                                                        \
        e.next();                                                                                                      \
    }
ADDX(ADDX_I32, i32, CreateAdd)
ADDX(ADDX_F32, f32, CreateFAdd)
ADDX(ADDX_F64, f64, CreateFAdd)

// --- references (REF_TO, VAR_IN_OUT): the address checked before every access ---
#define LDI(name, T)                                                                                                   \
    OP(name) {                                                                                                         \
        Value* p = e.deref(1, e.w(2), e.T()->getPrimitiveSizeInBits() / 8, false);                                     \
        e.st(0, e.loadAt(e.T(), p));                                                                                   \
        e.next();                                                                                                      \
    }
LDI(LDI_8, i8)
LDI(LDI_16, i16)
LDI(LDI_32, i32)
LDI(LDI_64, i64)
#define STI(name, T)                                                                                                   \
    OP(name) {                                                                                                         \
        Value* p = e.deref(0, e.w(1), e.T()->getPrimitiveSizeInBits() / 8, true);                                      \
        e.storeAt(p, e.ld(e.T(), 2));                                                                                  \
        e.next();                                                                                                      \
    }
STI(STI_8, i8)
STI(STI_16, i16)
STI(STI_32, i32)
STI(STI_64, i64)
OP(LDI_N) {
    Value* p = e.deref(1, 0, e.w(2), false);
    e.copy(e.addr(0), p, e.w(2));
    e.next();
}
OP(STI_N) {
    Value* p = e.deref(0, 0, e.w(2), true);
    e.copy(p, e.addr(1), e.w(2));
    e.next();
}
OP(CHK_REF) {
    e.trapIf(e.b.CreateICmpEQ(e.ld(e.i32(), 0), e.c32(0)), Trap::NullReference);
    e.next();
}
OP(CHK_PTR) {
    Value* p = e.ld(e.i32(), 0);
    e.trapIf(e.b.CreateICmpEQ(p, e.c32(0)), Trap::NullReference);
    Value* misaligned = e.b.CreateICmpNE(e.b.CreateAnd(p, e.c32(e.w(1) - 1)), e.c32(0));
    Value* outside = e.b.CreateICmpUGT(e.b.CreateAdd(e.b.CreateZExt(p, e.i64()), e.c64(e.w(2))), e.stackEnd);
    e.trapIf(e.b.CreateOr(misaligned, outside), Trap::InvalidReference);
    e.next();
}
OP(IDXP) {
    Value* p = e.ld(e.i32(), 1);
    e.trapIf(e.b.CreateICmpEQ(p, e.c32(0)), Trap::NullReference);
    Value* rel = e.b.CreateSub(e.b.CreateSExt(e.ld(e.i32(), 2), e.i64()),
                               e.c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.imm32(3)))));
    e.trapIf(e.b.CreateICmpUGE(rel, e.c64(e.w(5))), Trap::ArrayBounds);
    e.st(0, e.b.CreateAdd(p, e.b.CreateMul(e.b.CreateTrunc(rel, e.i32()), e.c32(e.w(4)))));
    e.next();
}

// --- FOR back-edges (the bound and step were folded by the back end) ---
#define LOOP_IMM(name, pred)                                                                                           \
    OP(name) {                                                                                                         \
        Value* v = e.ld(e.i32(), 0);                                                                                   \
        BasicBlock* again = e.fresh("again");                                                                          \
        e.b.CreateCondBr(e.b.CreateCmp(llvm::CmpInst::pred, v, e.c32(e.w(1))), again,                                  \
                         e.block(e.pc + bytecode::instructionLength(Opcode::name)));                                   \
        e.b.SetInsertPoint(again);                                                                                     \
        e.st(0, e.b.CreateAdd(v, e.c32(e.w(2))));                                                                      \
        e.loopBack(e.w(3));                                                                                            \
    }
LOOP_IMM(LOOP_I32_IMM, ICMP_SLE)
LOOP_IMM(LOOP_DN_I32_IMM, ICMP_SGE)
#define LOOP_I16(name, pred)                                                                                           \
    OP(name) {                                                                                                         \
        Value* v = e.ld(e.i32(), 0);                                                                                   \
        BasicBlock* again = e.fresh("again");                                                                          \
        e.b.CreateCondBr(e.b.CreateCmp(llvm::CmpInst::pred, v, e.c32(e.w(2))), again,                                  \
                         e.block(e.pc + bytecode::instructionLength(Opcode::name)));                                   \
        e.b.SetInsertPoint(again);                                                                                     \
        Value* next = e.b.CreateAdd(v, e.c32(e.w(3)));                                                                 \
        e.st(0, next);                                                                                                 \
        e.st(1, e.b.CreateTrunc(next, e.i16()));                                                                       \
        e.loopBack(e.w(4));                                                                                            \
    }
LOOP_I16(LOOP_I16_IMM, ICMP_SLE)
LOOP_I16(LOOP_DN_I16_IMM, ICMP_SGE)
// LOOP_I32 / LOOP_DN_I32: the room left (a - d, in 64 bits) against the step i.
#define LOOP_VAR(name, pred)                                                                                           \
    OP(name) {                                                                                                         \
        Value* v = e.ld(e.i32(), 0);                                                                                   \
        Value* room = e.b.CreateSub(e.b.CreateSExt(e.ld(e.i32(), 1), e.i64()), e.b.CreateSExt(v, e.i64()));            \
        Value* step = e.c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.imm32(2))));                        \
        BasicBlock* again = e.fresh("again");                                                                          \
        e.b.CreateCondBr(e.b.CreateCmp(llvm::CmpInst::pred, room, step), again,                                        \
                         e.block(e.pc + bytecode::instructionLength(Opcode::name)));                                   \
        e.b.SetInsertPoint(again);                                                                                     \
        e.st(0, e.b.CreateAdd(v, e.c32(e.w(2))));                                                                      \
        e.loopBack(e.w(3));                                                                                            \
    }
LOOP_VAR(LOOP_I32, ICMP_SGE)
LOOP_VAR(LOOP_DN_I32, ICMP_SLE)
// A step known only at run time (CHK_STEP_* has refused 0 before the loop).
OP(LOOP_STEP_I32) {
    auto& B = e.b;
    Value* v = e.ld(e.i32(), 0);
    Value* room = B.CreateSub(B.CreateSExt(e.ld(e.i32(), 1), e.i64()), B.CreateSExt(v, e.i64()));
    Value* step = e.ld(e.i32(), 2);
    Value* step64 = B.CreateSExt(step, e.i64());
    Value* up = B.CreateAnd(B.CreateICmpSGT(step, e.c32(0)), B.CreateICmpSGE(room, step64));
    Value* down = B.CreateAnd(B.CreateICmpSLT(step, e.c32(0)), B.CreateICmpSLE(room, step64));
    BasicBlock* again = e.fresh("again");
    B.CreateCondBr(B.CreateOr(up, down), again, e.block(e.pc + bytecode::instructionLength(Opcode::LOOP_STEP_I32)));
    B.SetInsertPoint(again);
    e.st(0, B.CreateAdd(v, step));
    e.loopBack(e.w(3));
}
OP(LOOP_STEP_I64) {
    auto& B = e.b;
    Value* v = e.ld(e.i64(), 0);
    Value* bound = e.ld(e.i64(), 1);
    Value* step = e.ld(e.i64(), 2);
    Value* zero = e.c64(0);
    Value* up = B.CreateAnd(B.CreateAnd(B.CreateICmpSGT(step, zero), B.CreateICmpSLT(v, bound)),
                            B.CreateICmpUGE(B.CreateSub(bound, v), step));
    Value* down = B.CreateAnd(B.CreateAnd(B.CreateICmpSLT(step, zero), B.CreateICmpSGT(v, bound)),
                              B.CreateICmpUGE(B.CreateSub(v, bound), B.CreateSub(zero, step)));
    BasicBlock* again = e.fresh("again");
    B.CreateCondBr(B.CreateOr(up, down), again, e.block(e.pc + bytecode::instructionLength(Opcode::LOOP_STEP_I64)));
    B.SetInsertPoint(again);
    e.st(0, B.CreateAdd(v, step));
    e.loopBack(e.w(3));
}

// --- division by a constant (the interpreter's through the reciprocal l: the same values) ---
OP(DIV_I32_IMM) {
    Value* a = e.ld(e.i32(), 1);
    Value* q = e.divBy(e.magnitude(a), bytecode::divisorMagnitude(e.imm32(2)));
    const bool negDivisor = e.imm32(2) < 0;
    Value* aNeg = e.b.CreateICmpSLT(a, e.c32(0));
    e.st(0, e.negIf(negDivisor ? e.b.CreateNot(aNeg) : aNeg, q));
    e.next();
}
OP(MOD_I32_IMM) {
    Value* a = e.ld(e.i32(), 1);
    Value* r = e.modBy(e.magnitude(a), e.w(2));
    e.st(0, e.negIf(e.b.CreateICmpSLT(a, e.c32(0)), r));
    e.next();
}
OP(DIV_U32_IMM) {
    e.st(0, e.divBy(e.ld(e.i32(), 1), e.w(2)));
    e.next();
}
OP(MOD_U32_IMM) {
    e.st(0, e.modBy(e.ld(e.i32(), 1), e.w(2)));
    e.next();
}
OP(ADDMOD_I32_IMM) {
    Value* sum = e.b.CreateAdd(e.ld(e.i32(), 1), e.ld(e.i32(), 2));
    Value* r = e.modBy(e.magnitude(sum), e.w(3));
    e.st(0, e.negIf(e.b.CreateICmpSLT(sum, e.c32(0)), r));
    e.next();
}
OP(ADDMOD_U32_IMM) {
    Value* sum = e.b.CreateAdd(e.ld(e.i32(), 1), e.ld(e.i32(), 2));
    e.st(0, e.modBy(sum, e.w(3)));
    e.next();
}

// --- fused REAL forms: each product rounded to its type, then added (never a hardware FMA:
//     IR without the contract flag is not fused) ---
BIN(MULADD_F32, f32, B.CreateFAdd(B.CreateFMul(a, b), e.ld(e.f32(), 3)))
BIN(MULADD_F64, f64, B.CreateFAdd(B.CreateFMul(a, b), e.ld(e.f64(), 3)))
BIN(MUL2ADD_F32, f32, B.CreateFAdd(B.CreateFMul(a, b), B.CreateFMul(e.ld(e.f32(), 3), e.ld(e.f32(), 4))))
BIN(MUL2ADD_F64, f64, B.CreateFAdd(B.CreateFMul(a, b), B.CreateFMul(e.ld(e.f64(), 3), e.ld(e.f64(), 4))))
OP(MULW_F64) {
    Value* a = e.b.CreateFPExt(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.b.CreateFMul(a, e.ld(e.f64(), 2)));
    e.next();
}
OP(DIVW_F64) {
    Value* a = e.b.CreateFPExt(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.b.CreateFDiv(a, e.ld(e.f64(), 2)));
    e.next();
}
OP(ADDW_F64) {
    Value* a = e.b.CreateFPExt(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.b.CreateFAdd(a, e.ld(e.f64(), 2)));
    e.next();
}

// --- calls (the interpreter's ENTER: Emitter::enter) ---
OP(CALL_FN) {
    e.enterPou(e.w(0), e.thisOffset, e.w(1));
}
OP(CALL_FB) {
    e.callInstance(e.w(0), e.offsetOf(1), e.w(2), e.addr(1));
}
OP(CALL_FB_IND) {
    const std::uint32_t p = e.w(0);
    Value* inst = e.ld(e.i32(), 1);
    e.trapIf(e.b.CreateICmpEQ(inst, e.c32(0)), Trap::NullReference);
    const bytecode::PouEntry& pou = e.module->pous[p];
    const std::uint64_t size = pou.instanceType < e.module->types.size() ? e.module->types[pou.instanceType].size : 0;
    Value* wide = e.b.CreateZExt(inst, e.i64());
    e.trapIf(e.b.CreateOr(e.b.CreateICmpUGT(e.b.CreateAdd(wide, e.c64(size)), e.stackEnd),
                          e.b.CreateICmpULT(wide, e.c64(e.constSize))),
             Trap::InvalidReference);
    e.callInstance(p, inst, e.w(2));
}
OP(CALL_IFACE) {
    Value* inst = e.ld(e.i32(), 0);
    e.trapIf(e.b.CreateICmpEQ(inst, e.c32(0)), Trap::NullReference);
    e.trapIf(e.b.CreateICmpUGT(e.b.CreateAdd(e.b.CreateZExt(inst, e.i64()), e.c64(4)), e.stackEnd),
             Trap::InvalidReference);
    e.callDispatched(inst, e.w(1), e.w(2));
}
OP(CALL_VIRT) {
    e.callDispatched(e.offsetOf(0), e.w(1), e.w(2));
}
OP(CALL_NATIVE) {
    e.trapIfCode(e.hostCall(Emitter::kCallNative, e.i32(), {e.c32(e.w(0)), e.offsetOf(1)}));
    e.next();
}

// --- strings, aggregate equality and assertions: the interpreter's code, through the host ---
OP(SMOV) {
    e.trapIfCode(e.hostCall(Emitter::kMoveString, e.i32(), {e.offsetOf(0), e.offsetOf(1), e.c32(e.w(2)), e.c32(0)}));
    e.next();
}
OP(WSMOV) {
    e.trapIfCode(e.hostCall(Emitter::kMoveString, e.i32(), {e.offsetOf(0), e.offsetOf(1), e.c32(e.w(2)), e.c32(1)}));
    e.next();
}
OP(SCMP) {
    e.st(0, e.hostCall(Emitter::kCompareStrings, e.i32(), {e.offsetOf(1), e.offsetOf(2), e.c32(0)}));
    e.next();
}
OP(WSCMP) {
    e.st(0, e.hostCall(Emitter::kCompareStrings, e.i32(), {e.offsetOf(1), e.offsetOf(2), e.c32(1)}));
    e.next();
}
OP(EQ_AGG) {
    Value* eq = e.hostCall(Emitter::kValuesEqual, e.i32(), {e.c32(e.w(3)), e.offsetOf(1), e.offsetOf(2)});
    e.st(0, e.b.CreateTrunc(eq, e.i8()));
    e.next();
}
OP(ASSERT_FAIL) {
    e.hostCall(Emitter::kAssertFailed, e.b.getVoidTy(),
               {e.offsetOf(0), e.offsetOf(1), e.offsetOf(2), e.c32(e.w(3)), e.c32(e.w(4))});
    e.raise(Trap::AssertionFailed);
}

// --- rotations (the interpreter's rotl8/rotl16 for the narrow ones; funnel shifts take the
//     count modulo the width, as std::rotl with b & 31 / & 63) ---
OP(ROL_32) {
    Value* a = e.ld(e.i32(), 1);
    e.st(0, e.intrinsic(llvm::Intrinsic::fshl, {a, a, e.ld(e.i32(), 2)}));
    e.next();
}
OP(ROR_32) {
    Value* a = e.ld(e.i32(), 1);
    e.st(0, e.intrinsic(llvm::Intrinsic::fshr, {a, a, e.ld(e.i32(), 2)}));
    e.next();
}
OP(ROL_64) {
    Value* a = e.ld(e.i64(), 1);
    e.st(0, e.intrinsic(llvm::Intrinsic::fshl, {a, a, e.b.CreateZExt(e.ld(e.i32(), 2), e.i64())}));
    e.next();
}
OP(ROR_64) {
    Value* a = e.ld(e.i64(), 1);
    e.st(0, e.intrinsic(llvm::Intrinsic::fshr, {a, a, e.b.CreateZExt(e.ld(e.i32(), 2), e.i64())}));
    e.next();
}
OP(ROL_8) {
    e.st(0, e.rotateLeftNarrow(e.ld(e.i32(), 1), e.ld(e.i32(), 2), 8));
    e.next();
}
OP(ROR_8) {
    e.st(0, e.rotateLeftNarrow(e.ld(e.i32(), 1), e.rightAsLeft(e.ld(e.i32(), 2), 8), 8));
    e.next();
}
OP(ROL_16) {
    e.st(0, e.rotateLeftNarrow(e.ld(e.i32(), 1), e.ld(e.i32(), 2), 16));
    e.next();
}
OP(ROR_16) {
    e.st(0, e.rotateLeftNarrow(e.ld(e.i32(), 1), e.rightAsLeft(e.ld(e.i32(), 2), 16), 16));
    e.next();
}

// --- REAL to integer: round half even (TRUNC: toward zero), NaN 0, saturating ---
#define TO_INT(name, TS, TD, lo, hi, trunc)                                                                            \
    OP(name) {                                                                                                         \
        e.st(0, e.realToInt(e.ld(e.TS(), 1), e.TD(), lo, hi, trunc));                                                  \
        e.next();                                                                                                      \
    }
constexpr auto kI32Min = static_cast<double>(std::numeric_limits<std::int32_t>::min());
constexpr auto kI32Max = static_cast<double>(std::numeric_limits<std::int32_t>::max());
constexpr auto kI64Min = static_cast<double>(std::numeric_limits<std::int64_t>::min());
constexpr auto kI64Max = static_cast<double>(std::numeric_limits<std::int64_t>::max());
constexpr auto kU64Max = static_cast<double>(std::numeric_limits<std::uint64_t>::max());
TO_INT(F32_TO_I32, f32, i32, kI32Min, kI32Max, false)
TO_INT(F64_TO_I32, f64, i32, kI32Min, kI32Max, false)
TO_INT(F32_TO_I64, f32, i64, kI64Min, kI64Max, false)
TO_INT(F64_TO_I64, f64, i64, kI64Min, kI64Max, false)
TO_INT(TRUNC_F32_I32, f32, i32, kI32Min, kI32Max, true)
TO_INT(TRUNC_F64_I32, f64, i32, kI32Min, kI32Max, true)
TO_INT(TRUNC_F32_I64, f32, i64, kI64Min, kI64Max, true)
TO_INT(TRUNC_F64_I64, f64, i64, kI64Min, kI64Max, true)
OP(F64_TO_U64) {
    e.st(0, e.realToInt(e.ld(e.f64(), 1), e.i64(), 0.0, kU64Max, false, false));
    e.next();
}
BIN(EXPT_F32, f32, e.libm("powf", e.f32(), {a, b}))
BIN(EXPT_F64, f64, e.libm("pow", e.f64(), {a, b}))

#undef OP
#undef TO_INT
#undef DIVMOD
#undef BIN
#undef UN
#undef CMP
#undef JCMP
#undef JCMPI
#undef BIN_T
#undef LDX
#undef LDI
#undef STI
#undef STX
#undef ADDX
#undef LOOP_IMM
#undef LOOP_I16
#undef LOOP_VAR

// The tables, generated from the one list.
constexpr std::array<bool, bytecode::kOpcodeCount> kSupported = {{
#define TAKT_OP(name, format, doc) Op<Opcode::name>::kSupported,
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
}};
using EmitFn = void (*)(Emitter&);
constexpr std::array<EmitFn, bytecode::kOpcodeCount> kEmit = {{
#define TAKT_OP(name, format, doc) &Op<Opcode::name>::emit,
#include "takt/bytecode/opcodes.def"
#undef TAKT_OP
}};

// Where control can go after the instruction at `pc`: the next instruction unless it ends the
// run or always jumps, and its jump target.
bool fallsThrough(Opcode op) {
    return op != Opcode::RET && op != Opcode::JMP && op != Opcode::TRAP && op != Opcode::ASSERT_FAIL;
}

// A call of a standard FB needs its DirectFb.
bool callable(const bytecode::Module& module, const std::uint32_t* at, std::span<const DirectFb> directFbs) {
    const auto op = static_cast<Opcode>(at[0]);
    if (op != Opcode::CALL_FB && op != Opcode::CALL_FB_IND) {
        return true;
    }
    const std::uint32_t p = at[1];
    return p >= module.pous.size() || module.pous[p].native == bytecode::kNone ||
           (p < directFbs.size() && directFbs[p].fn != nullptr);
}

} // namespace

Reach reachable(const bytecode::Module& module, std::uint32_t entry, std::span<const Opcode> refused,
                std::span<const DirectFb> directFbs) {
    Reach r;
    r.starts.assign(module.code.size() + 1, false);
    std::vector<std::uint32_t> work{entry};
    while (!work.empty()) {
        const std::uint32_t pc = work.back();
        work.pop_back();
        if (pc >= module.code.size() || r.starts[pc]) {
            continue;
        }
        r.starts[pc] = true;
        const std::uint32_t opWord = module.code[pc];
        if (opWord >= bytecode::kOpcodeCount || !kSupported[opWord] ||
            std::find(refused.begin(), refused.end(), static_cast<Opcode>(opWord)) != refused.end() ||
            !callable(module, &module.code[pc], directFbs)) {
            r.unsupportedPc = pc;
            return r;
        }
        const auto op = static_cast<Opcode>(opWord);
        const bytecode::OpcodeInfo& info = bytecode::kOpcodeInfo[opWord];
        for (std::uint32_t k = 0; k < info.operandCount; ++k) {
            if (info.operands[k].kind == bytecode::OperandKind::Jump) {
                work.push_back(module.code[pc + 1 + info.operands[k].word]);
            }
        }
        if (fallsThrough(op)) {
            work.push_back(pc + info.length);
        }
    }
    return r;
}

namespace {

void translateBody(Emitter& e, const bytecode::Module& module, std::uint32_t entry, const Reach& reach) {
    llvm::Argument* args = e.fn->arg_begin();
    e.image = args + 0;
    e.thisOffset = args + 1;
    e.frameOffset = args + 2;
    e.ctx = args + 3;
    e.depth = args + 4;
    BasicBlock* start = e.fresh("start");
    e.b.SetInsertPoint(start);
    e.ticks = e.b.CreateAlloca(e.i64());
    e.b.CreateStore(e.b.CreateLoad(e.i64(), e.b.CreateStructGEP(e.runContextType(), e.ctx, 0)), e.ticks);
    e.abort = e.b.CreateLoad(e.i8()->getPointerTo(), e.b.CreateStructGEP(e.runContextType(), e.ctx, 1));
    e.stackEnd = e.b.CreateLoad(e.i64(), e.b.CreateStructGEP(e.runContextType(), e.ctx, 4));
    e.fbContext = e.b.CreateLoad(e.i8()->getPointerTo(), e.b.CreateStructGEP(e.runContextType(), e.ctx, 5));
    e.base = {e.image, e.b.CreateInBoundsGEP(e.i8(), e.image, e.b.CreateZExt(e.thisOffset, e.i64())),
              e.b.CreateInBoundsGEP(e.i8(), e.image, e.b.CreateZExt(e.frameOffset, e.i64()))};
    e.fastLoops.clear();
    e.spans.clear();
    e.frameEscapes = false;
    if (const std::uint32_t size = e.privateFrameBytes; size != 0) {
        // The frame starts as the image's bytes there (LLVM drops the copy of every byte the
        // body writes before reading, as compiled ST does), then lives in registers and on the
        // machine stack.
        llvm::AllocaInst* frame = e.b.CreateAlloca(llvm::ArrayType::get(e.i8(), size));
        frame->setAlignment(llvm::Align(8));
        Value* at = e.b.CreateBitCast(frame, e.i8()->getPointerTo());
        e.b.CreateMemCpy(at, llvm::MaybeAlign(8), e.base[bytecode::kTagFrame], llvm::MaybeAlign(1), size);
        e.base[bytecode::kTagFrame] = at;
    }
    std::vector<BasicBlock*> blocks(module.code.size() + 1, nullptr);
    for (std::size_t pc = 0; pc < reach.starts.size(); ++pc) {
        if (reach.starts[pc]) {
            blocks[pc] = e.fresh("i");
        }
    }
    e.blocks = &blocks;
    e.code = module.code.data();
    e.rolled.clear();
    e.rolling = nullptr;
    const bytecode::PouEntry& pou = module.pous[pouContaining(module, entry)];
    for (RepeatRun& run : repeatRuns(module, pou.code, pou.codeEnd, reach.starts)) {
        Emitter::Rolled& r = e.rolled.emplace_back();
        r.run = std::move(run);
        r.entry = e.fresh("rolled");
        r.header = e.fresh("segment");
        r.latch = e.fresh("next-segment");
        const RepeatRun& rr = r.run;
        for (std::size_t v = 0; v < rr.varying.size(); ++v) {
            const std::uint32_t word = rr.varying[v];
            std::vector<std::uint32_t> values;
            for (std::uint32_t j = 0; j < rr.count; ++j) {
                const std::uint32_t raw = module.code[rr.start + j * rr.length + word];
                values.push_back(rr.address[v] ? bytecode::addressOffset(raw) : raw);
            }
            const std::int64_t stride = std::int64_t{values[1]} - std::int64_t{values[0]};
            bool affine = stride >= 0;
            for (std::uint32_t j = 1; j < rr.count; ++j) {
                affine = affine && std::int64_t{values[j]} - std::int64_t{values[j - 1]} == stride;
            }
            r.first[word] = values[0];
            llvm::GlobalVariable* table = nullptr;
            if (!affine) {
                auto* type = llvm::ArrayType::get(e.i32(), values.size());
                table = new llvm::GlobalVariable(e.mod, type, true, llvm::GlobalValue::PrivateLinkage,
                                                 llvm::ConstantDataArray::get(e.cx, values), "takt.segments");
            }
            r.words[word] = {table, stride};
        }
        for (std::uint32_t pc = rr.start + rr.length; pc < rr.end(); ++pc) {
            if (blocks[pc] != nullptr) { // the later segments run as the first one's code
                blocks[pc]->eraseFromParent();
                blocks[pc] = nullptr;
            }
        }
        e.b.SetInsertPoint(r.header);
        r.index = e.b.CreatePHI(e.i32(), 2);
        e.b.CreateBr(blocks[rr.start]);
        e.b.SetInsertPoint(r.entry);
        e.b.CreateBr(r.header);
        r.index->addIncoming(e.c32(0), r.entry);
    }
    e.b.SetInsertPoint(start);
    for (const FastLoop& loop : fastLoops(module, reach.starts, e.scope[bytecode::kTagThis] != nullptr)) {
        Emitter::Fast& f = e.fastLoops.emplace_back(Emitter::Fast{loop, e.fresh("preheader"), {}});
        for (std::uint32_t pc = loop.head; pc <= loop.backEdge; ++pc) {
            f.blocks.push_back(reach.starts[pc] ? e.fresh("fast") : nullptr);
        }
    }
    e.pc = bytecode::kNone; // the entry comes from outside every loop
    e.b.CreateBr(e.block(entry));
    for (std::size_t pc = 0; pc < reach.starts.size(); ++pc) {
        if (!reach.starts[pc] || blocks[pc] == nullptr) {
            continue;
        }
        e.pc = static_cast<std::uint32_t>(pc);
        e.rolling = nullptr;
        for (const Emitter::Rolled& r : e.rolled) {
            if (pc >= r.run.start && pc < r.run.start + r.run.length) {
                e.rolling = &r;
            }
        }
        e.b.SetInsertPoint(blocks[pc]);
        kEmit[module.code[pc]](e);
    }
    e.rolling = nullptr;
    for (const Emitter::Rolled& r : e.rolled) {
        e.pc = r.run.start;
        e.b.SetInsertPoint(r.latch);
        Value* following = e.b.CreateAdd(r.index, e.c32(1));
        r.index->addIncoming(following, r.latch);
        e.b.CreateCondBr(e.b.CreateICmpULT(following, e.c32(r.run.count)), r.header, e.block(r.run.end()));
    }
    for (const Emitter::Fast& f : e.fastLoops) {
        e.copying = &f;
        for (std::uint32_t pc = f.loop.head; pc <= f.loop.backEdge; ++pc) {
            if (reach.starts[pc]) {
                e.pc = pc;
                e.b.SetInsertPoint(f.blocks[pc - f.loop.head]);
                kEmit[module.code[pc]](e);
            }
        }
        e.copying = nullptr;
        e.preheader(f);
    }
}

// The largest frame kept in registers and on the machine stack rather than in the image.
constexpr std::uint32_t kPrivateFrameBytes = 4096;

} // namespace

void translatePou(llvm::Function& fn, std::uint32_t pou, const Reach& reach, const PouLinks& links) {
    const bytecode::Module& module = links.module;
    llvm::LLVMContext& cx = fn.getContext();
    llvm::IRBuilder<> builder(cx);
    Emitter e{cx, *fn.getParent(), builder};
    e.fn = &fn;
    e.module = &module;
    e.bodyOf = links.bodyOf;
    e.bodyTable = links.bodyTable;
    e.frameTable = links.frameTable;
    e.pcBase = links.pcBase;
    e.pouStart = module.pous[pou].code;
    e.directFbs = links.directFbs;
    e.standardFbs = links.standardFbs;
    if (links.runByEngine) {
        llvm::MDBuilder md(cx);
        llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("takt.image");
        llvm::MDNode* inInstance = md.createAnonymousAliasScope(domain, "instance");
        llvm::MDNode* inFrame = md.createAnonymousAliasScope(domain, "frame");
        e.scope[bytecode::kTagThis] = llvm::MDNode::get(cx, {inInstance});
        e.scope[bytecode::kTagFrame] = llvm::MDNode::get(cx, {inFrame});
        e.noalias[bytecode::kTagThis] = e.scope[bytecode::kTagFrame];
        e.noalias[bytecode::kTagFrame] = e.scope[bytecode::kTagThis];
    }
    e.constSize = module.constSize;
    // A PROGRAM's or FB's frame holds only its temporaries (the caller passes nothing there and
    // reads nothing back), so unless the body lets its image offsets out, the frame lives in
    // registers: the stack region of the image is scratch, not state, and keeps whatever it held.
    // A large frame stays in the image, so a call chain of private frames takes at most
    // kMaxCallDepth x 4 KB (1 MB) of the scan thread's stack.
    const bytecode::PouKind kind = module.pous[pou].kind;
    const std::uint32_t frameSize = module.pous[pou].frameSize;
    const bool ownFrame = kind == bytecode::PouKind::Program || kind == bytecode::PouKind::FunctionBlock;
    e.privateFrameBytes = ownFrame && frameSize <= kPrivateFrameBytes ? frameSize : 0;
    translateBody(e, module, module.pous[pou].code, reach);
    if (e.privateFrameBytes != 0 && e.frameEscapes) {
        e.fn->deleteBody();
        e.privateFrameBytes = 0;
        translateBody(e, module, module.pous[pou].code, reach);
    }
    e.scopeArrays();
}

namespace tier {

bool translates(bytecode::Opcode op) noexcept {
    const auto index = static_cast<std::size_t>(op);
    return index < kSupported.size() && kSupported[index];
}

std::string_view libraryName() noexcept {
    return "LLVM " LLVM_VERSION_STRING " ORC";
}

} // namespace tier

} // namespace takt::native
