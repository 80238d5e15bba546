// libgccjit translator for the library measurement (gccjit_translator.h).
//
// Written as runtime/native/src/translator.cpp is, so that the two libraries get the same input:
// one function per POU body over the same image, operands resolved as image + base[tag] +
// offset, unaligned loads and stores in the handler's order (each load goes to a fresh local, so
// a destination that is also a source behaves the same), a trap stores the instruction's code
// offset in the RunContext and returns the Trap, and back-edges charge the watchdog budget and
// poll the abort flag on every 64th tick. The emitters are chosen per opcode by a specialisation
// of Op<>; the tables come from opcodes.def, so every other opcode is refused.
//
// C semantics are pinned to the interpreter's with options rather than code: -fwrapv (integer
// arithmetic wraps, as LLVM's add/mul without nsw), -fno-strict-aliasing (the image is read at
// one offset with several types, as LLVM IR without TBAA), -ffp-contract=off (no FMA, as IR
// without the contract flag). libgccjit 12 has no conditional expression, so select() builds a
// diamond that GCC turns back into a conditional move.
#include "gccjit_translator.h"

#include "takt/bytecode/opcodes.h"

#include <libgccjit.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace takt::bench::gccjit {

namespace {

using bytecode::Opcode;
using bytecode::Trap;
using Rv = gcc_jit_rvalue*;
using Ty = gcc_jit_type*;
using Blk = gcc_jit_block*;

constexpr std::uint64_t kAbortPollMask = 63;

struct Emitter {
    gcc_jit_context* cx = nullptr;
    gcc_jit_function* fn = nullptr;
    Blk blk = nullptr; // where the next statement goes
    const std::uint32_t* code = nullptr;
    std::uint32_t pc = 0;
    std::array<Rv, 3> base{}; // uint8_t*: image, image + this, image + frame
    Rv image = nullptr;
    Rv ctx = nullptr;                         // RunContext*
    std::array<gcc_jit_field*, 4> ctxField{}; // ticks, abort, pc, host (unused: no calls)
    gcc_jit_lvalue* ticks = nullptr;
    Rv abort = nullptr; // const volatile uint8_t*
    std::vector<Blk>* blocks = nullptr;
    std::map<Ty, Ty>* unaligned = nullptr;
    std::map<std::string, gcc_jit_function*>* imported = nullptr;
    std::uint64_t constSize = 0;
    std::uint64_t imageSize = 0;
    unsigned temps = 0;

    [[nodiscard]] std::uint32_t w(std::uint32_t k) const { return code[pc + 1 + k]; }
    [[nodiscard]] std::int32_t imm32(std::uint32_t k) const { return static_cast<std::int32_t>(w(k)); }
    [[nodiscard]] std::uint64_t imm64(std::uint32_t k) const {
        return static_cast<std::uint64_t>(w(k)) | (static_cast<std::uint64_t>(w(k + 1)) << 32);
    }

    Ty type(gcc_jit_types t) { return gcc_jit_context_get_type(cx, t); }
    Ty i8() { return type(GCC_JIT_TYPE_INT8_T); }
    Ty i16() { return type(GCC_JIT_TYPE_INT16_T); }
    Ty i32() { return type(GCC_JIT_TYPE_INT32_T); }
    Ty u32() { return type(GCC_JIT_TYPE_UINT32_T); }
    Ty i64() { return type(GCC_JIT_TYPE_INT64_T); }
    Ty u64() { return type(GCC_JIT_TYPE_UINT64_T); }
    Ty u128() { return type(GCC_JIT_TYPE_UINT128_T); }
    Ty f32() { return type(GCC_JIT_TYPE_FLOAT); }
    Ty f64() { return type(GCC_JIT_TYPE_DOUBLE); }
    Ty boolean() { return type(GCC_JIT_TYPE_BOOL); }
    Ty bytePtr() { return gcc_jit_type_get_pointer(type(GCC_JIT_TYPE_UINT8_T)); }
    Rv c32(std::uint32_t v) { return gcc_jit_context_new_rvalue_from_int(cx, i32(), static_cast<std::int32_t>(v)); }
    Rv c64(std::uint64_t v) { return gcc_jit_context_new_rvalue_from_long(cx, i64(), static_cast<long>(v)); }
    Rv cu64(std::uint64_t v) { return gcc_jit_context_new_rvalue_from_long(cx, u64(), static_cast<long>(v)); }
    Rv cast(Rv v, Ty t) { return gcc_jit_context_new_cast(cx, nullptr, v, t); }
    Rv bin(gcc_jit_binary_op op, Rv a, Rv b) { return gcc_jit_context_new_binary_op(cx, nullptr, op, typeOf(a), a, b); }
    Rv cmp(gcc_jit_comparison op, Rv a, Rv b) { return gcc_jit_context_new_comparison(cx, nullptr, op, a, b); }
    Rv add(Rv a, Rv b) { return bin(GCC_JIT_BINARY_OP_PLUS, a, b); }
    Rv mul(Rv a, Rv b) { return bin(GCC_JIT_BINARY_OP_MULT, a, b); }
    static Ty typeOf(Rv v) { return gcc_jit_rvalue_get_type(v); }

    // v in a fresh local, evaluated here: loads and shared subexpressions happen once, in order.
    Rv let(Rv v) {
        gcc_jit_lvalue* l = gcc_jit_function_new_local(fn, nullptr, typeOf(v), ("t" + std::to_string(temps++)).c_str());
        gcc_jit_block_add_assignment(blk, nullptr, l, v);
        return gcc_jit_lvalue_as_rvalue(l);
    }
    // The T at byte pointer p, without assuming T's alignment.
    gcc_jit_lvalue* at(Ty t, Rv p) {
        Ty& u = (*unaligned)[t];
        if (u == nullptr) {
            u = gcc_jit_type_get_pointer(gcc_jit_type_get_aligned(t, 1));
        }
        return gcc_jit_rvalue_dereference(cast(p, u), nullptr);
    }
    Rv addr(std::uint32_t k) {
        const std::uint32_t word = w(k);
        gcc_jit_lvalue* byte = gcc_jit_context_new_array_access(cx, nullptr, base[bytecode::addressTag(word)],
                                                                c32(bytecode::addressOffset(word)));
        return gcc_jit_lvalue_get_address(byte, nullptr);
    }
    Rv loadAt(Ty t, Rv p) { return let(cast(gcc_jit_lvalue_as_rvalue(at(t, p)), t)); }
    void storeAt(Rv p, Rv v) {
        gcc_jit_lvalue* dst = at(typeOf(v), p);
        gcc_jit_block_add_assignment(blk, nullptr, dst,
                                     cast(v, gcc_jit_rvalue_get_type(gcc_jit_lvalue_as_rvalue(dst))));
    }
    Rv ld(Ty t, std::uint32_t k) { return loadAt(t, addr(k)); }
    void st(std::uint32_t k, Rv v) { storeAt(addr(k), v); }

    Blk block(std::uint32_t at) { return (*blocks)[at]; }
    Blk fresh() { return gcc_jit_function_new_block(fn, nullptr); }
    void goTo(Blk target) { gcc_jit_block_end_with_jump(blk, nullptr, target); }
    void cond(Rv c, Blk yes, Blk no) { gcc_jit_block_end_with_conditional(blk, nullptr, c, yes, no); }
    // c ? a : b (a and b are pure: loads were bound by let()).
    Rv select(Rv c, Rv a, Rv b) {
        gcc_jit_lvalue* r = gcc_jit_function_new_local(fn, nullptr, typeOf(a), ("s" + std::to_string(temps++)).c_str());
        Blk yes = fresh();
        Blk no = fresh();
        Blk join = fresh();
        cond(c, yes, no);
        gcc_jit_block_add_assignment(yes, nullptr, r, a);
        gcc_jit_block_end_with_jump(yes, nullptr, join);
        gcc_jit_block_add_assignment(no, nullptr, r, cast(b, typeOf(a)));
        gcc_jit_block_end_with_jump(no, nullptr, join);
        blk = join;
        return gcc_jit_lvalue_as_rvalue(r);
    }
    Rv unlikely(Rv c) {
        gcc_jit_function* expect = gcc_jit_context_get_builtin_function(cx, "__builtin_expect");
        Ty lng = type(GCC_JIT_TYPE_LONG);
        std::array<Rv, 2> args{cast(c, lng), gcc_jit_context_zero(cx, lng)};
        return cmp(GCC_JIT_COMPARISON_NE, gcc_jit_context_new_call(cx, nullptr, expect, 2, args.data()),
                   gcc_jit_context_zero(cx, lng));
    }
    void trapIf(Rv c, Trap trap) {
        Blk bad = fresh();
        Blk ok = fresh();
        cond(unlikely(c), bad, ok);
        blk = bad;
        raise(trap);
        blk = ok;
    }
    void raise(Trap trap) {
        gcc_jit_block_add_assignment(blk, nullptr, gcc_jit_rvalue_dereference_field(ctx, nullptr, ctxField[2]),
                                     cast(c32(pc), u32()));
        gcc_jit_block_end_with_return(blk, nullptr, cast(c32(static_cast<std::uint32_t>(trap)), u32()));
    }
    // A back-edge: one tick of the budget, the abort flag on every 64th. The flag is a relaxed
    // atomic byte in the engine; a volatile byte load is the same instruction on amd64 and arm64
    // (libgccjit 12 has no atomic load).
    void watchdog() {
        Rv t = let(bin(GCC_JIT_BINARY_OP_MINUS, gcc_jit_lvalue_as_rvalue(ticks), cu64(1)));
        gcc_jit_block_add_assignment(blk, nullptr, ticks, t);
        Blk poll = fresh();
        Blk cont = fresh();
        cond(unlikely(cmp(GCC_JIT_COMPARISON_EQ, bin(GCC_JIT_BINARY_OP_BITWISE_AND, t, cu64(kAbortPollMask)), cu64(0))),
             poll, cont);
        blk = poll;
        trapIf(cmp(GCC_JIT_COMPARISON_EQ, t, cu64(0)), Trap::BudgetExceeded);
        Rv flag = gcc_jit_lvalue_as_rvalue(gcc_jit_rvalue_dereference(abort, nullptr));
        trapIf(cmp(GCC_JIT_COMPARISON_NE, cast(flag, i32()), c32(0)), Trap::Aborted);
        goTo(cont);
        blk = cont;
    }
    Blk following() { return block(pc + bytecode::instructionLength(static_cast<Opcode>(code[pc]))); }
    void next() { goTo(following()); }
    void jump(std::uint32_t target) {
        if (target <= pc) {
            watchdog();
        }
        goTo(block(target));
    }
    void loopBack(std::uint32_t target) {
        watchdog();
        goTo(block(target));
    }
    void branch(Rv c, std::uint32_t target) {
        Blk taken = fresh();
        cond(c, taken, following());
        blk = taken;
        jump(target);
    }
    // ((r * n) * d) >> 64 in 128 bits: MOD by a constant through its reciprocal, as translator.cpp
    // and the interpreter.
    Rv modByReciprocal(Rv n32, std::uint32_t d, std::uint64_t r) {
        Rv low = mul(cu64(r), cast(cast(n32, u32()), u64()));
        Rv p = mul(cast(low, u128()), gcc_jit_context_new_rvalue_from_int(cx, u128(), static_cast<int>(d)));
        return cast(bin(GCC_JIT_BINARY_OP_RSHIFT, p, gcc_jit_context_new_rvalue_from_int(cx, u128(), 64)), u32());
    }
    Rv magnitude(Rv a) { // |a| as u32 (INT_MIN gives 2^31)
        return cast(select(cmp(GCC_JIT_COMPARISON_LT, a, c32(0)),
                           gcc_jit_context_new_unary_op(cx, nullptr, GCC_JIT_UNARY_OP_MINUS, i32(), a), a),
                    u32());
    }
    Rv negIf(Rv c, Rv v) {
        Rv neg = bin(GCC_JIT_BINARY_OP_MINUS, cast(c32(0), typeOf(v)), v);
        return select(c, neg, v);
    }
    // The element of an array access: operand `arr` is the array, `idx` the index followed by
    // the lower bound, the element size and the count.
    Rv element(std::uint32_t arr, std::uint32_t idx) {
        Rv rel = let(bin(GCC_JIT_BINARY_OP_MINUS, cast(ld(i32(), idx), i64()),
                         c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(imm32(idx + 1))))));
        trapIf(cmp(GCC_JIT_COMPARISON_GE, cast(rel, u64()), cu64(w(idx + 3))), Trap::ArrayBounds);
        gcc_jit_lvalue* e = gcc_jit_context_new_array_access(cx, nullptr, addr(arr), mul(rel, c64(w(idx + 2))));
        return let(gcc_jit_lvalue_get_address(e, nullptr));
    }
    Rv deref(std::uint32_t k, std::uint64_t bytes, bool forStore) {
        Rv p = ld(u32(), k);
        trapIf(cmp(GCC_JIT_COMPARISON_EQ, p, cast(c32(0), u32())), Trap::NullReference);
        Rv at64 = cast(p, u64());
        Rv bad = cmp(GCC_JIT_COMPARISON_GT, add(at64, cu64(bytes)), cu64(imageSize));
        if (forStore) {
            bad = gcc_jit_context_new_binary_op(cx, nullptr, GCC_JIT_BINARY_OP_LOGICAL_OR, boolean(), bad,
                                                cmp(GCC_JIT_COMPARISON_LT, at64, cu64(constSize)));
        }
        trapIf(bad, Trap::InvalidReference);
        return let(gcc_jit_lvalue_get_address(gcc_jit_context_new_array_access(cx, nullptr, image, at64), nullptr));
    }
    void copy(Rv dst, Rv src, std::uint32_t n) {
        gcc_jit_function* memmove = gcc_jit_context_get_builtin_function(cx, "__builtin_memmove");
        Ty vp = type(GCC_JIT_TYPE_VOID_PTR);
        std::array<Rv, 3> args{cast(dst, vp), cast(src, vp),
                               gcc_jit_context_new_rvalue_from_long(cx, type(GCC_JIT_TYPE_SIZE_T), n)};
        gcc_jit_block_add_eval(blk, nullptr, gcc_jit_context_new_call(cx, nullptr, memmove, 3, args.data()));
    }
    Rv builtin(const char* name, Rv a) {
        return gcc_jit_context_new_call(cx, nullptr, gcc_jit_context_get_builtin_function(cx, name), 1, &a);
    }
    Rv call(const char* name, Ty t, Rv a) {
        gcc_jit_function*& f = (*imported)[name];
        if (f == nullptr) {
            gcc_jit_param* p = gcc_jit_context_new_param(cx, nullptr, t, "x");
            f = gcc_jit_context_new_function(cx, nullptr, GCC_JIT_FUNCTION_IMPORTED, t, name, 1, &p, 0);
        }
        return gcc_jit_context_new_call(cx, nullptr, f, 1, &a);
    }
};

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
// d := expr(a, b) over type T.
#define BIN(name, T, expr)                                                                                             \
    OP(name) {                                                                                                         \
        Rv a = e.ld(e.T(), 1);                                                                                         \
        Rv b = e.ld(e.T(), 2);                                                                                         \
        (void)b;                                                                                                       \
        e.st(0, expr);                                                                                                 \
        e.next();                                                                                                      \
    }
#define UN(name, TS, expr) BIN(name, TS, expr)
#define JCMP(name, T, op)                                                                                              \
    OP(name) {                                                                                                         \
        e.branch(e.cmp(GCC_JIT_COMPARISON_##op, e.ld(e.T(), 0), e.ld(e.T(), 1)), e.w(2));                              \
    }
#define JCMPI(name, op)                                                                                                \
    OP(name) {                                                                                                         \
        e.branch(e.cmp(GCC_JIT_COMPARISON_##op, e.ld(e.i32(), 0), e.c32(e.w(1))), e.w(2));                             \
    }

// --- control ---
OP(NOP) {
    e.next();
}
OP(RET) {
    gcc_jit_block_end_with_return(e.blk, nullptr, e.cast(e.c32(0), e.u32()));
}
OP(JMP) {
    e.jump(e.w(0));
}
JCMP(JEQ_I32, i32, EQ)
JCMP(JNE_I32, i32, NE)
JCMP(JLT_I32, i32, LT)
JCMP(JLE_I32, i32, LE)
JCMP(JGT_I32, i32, GT)
JCMP(JGE_I32, i32, GE)
JCMPI(JLT_I32_IMM, LT)
JCMPI(JLE_I32_IMM, LE)
JCMPI(JGT_I32_IMM, GT)
JCMPI(JGE_I32_IMM, GE)
JCMPI(JEQ_I32_IMM, EQ)
JCMPI(JNE_I32_IMM, NE)

// --- moves ---
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
OP(MOVI_32) {
    e.st(0, e.c32(e.w(1)));
    e.next();
}
UN(SX_16_32, i16, e.cast(a, e.i32()))

// --- integer arithmetic (wrapping: -fwrapv) ---
BIN(ADD_I32, i32, e.add(a, b))
BIN(SUB_I32, i32, e.bin(GCC_JIT_BINARY_OP_MINUS, a, b))
BIN(MUL_I32, i32, e.mul(a, b))
OP(ADD_I32_IMM) {
    e.st(0, e.add(e.ld(e.i32(), 1), e.c32(e.w(2))));
    e.next();
}
OP(MUL_I32_IMM) {
    e.st(0, e.mul(e.ld(e.i32(), 1), e.c32(e.w(2))));
    e.next();
}
OP(MOD_I32_IMM) {
    Rv a = e.ld(e.i32(), 1);
    Rv r = e.let(e.modByReciprocal(e.magnitude(a), e.w(2), e.imm64(3)));
    e.st(0, e.negIf(e.cmp(GCC_JIT_COMPARISON_LT, a, e.c32(0)), r));
    e.next();
}
OP(ADDMOD_I32_IMM) {
    Rv sum = e.let(e.add(e.ld(e.i32(), 1), e.ld(e.i32(), 2)));
    Rv r = e.let(e.modByReciprocal(e.magnitude(sum), e.w(3), e.imm64(4)));
    e.st(0, e.negIf(e.cmp(GCC_JIT_COMPARISON_LT, sum, e.c32(0)), r));
    e.next();
}

// --- floating point (IEEE, in source order: no -ffast-math, no contraction) ---
BIN(ADD_F32, f32, e.add(a, b))
BIN(MUL_F32, f32, e.mul(a, b))
BIN(ADD_F64, f64, e.add(a, b))
BIN(MUL_F64, f64, e.mul(a, b))
// The builtin, so that GCC emits the instruction as LLVM does for llvm.sqrt.
UN(SQRT_F32, f32, e.builtin("__builtin_sqrtf", a))
UN(SQRT_F64, f64, e.builtin("__builtin_sqrt", a))
constexpr std::array<const char*, bytecode::kMathFnCount> kMathF64 = {"log", "log10", "exp",  "sin", "cos",
                                                                      "tan", "asin",  "acos", "atan"};
OP(MATH_F64) {
    const std::uint32_t f = e.w(2);
    Rv a = e.ld(e.f64(), 1);
    e.st(0, f < kMathF64.size() ? e.call(kMathF64[f], e.f64(), a)
                                : gcc_jit_context_new_rvalue_from_double(e.cx, e.f64(), __builtin_nan("")));
    e.next();
}
BIN(MULADD_F32, f32, e.add(e.mul(a, b), e.ld(e.f32(), 3)))
BIN(MULADD_F64, f64, e.add(e.mul(a, b), e.ld(e.f64(), 3)))
BIN(MUL2ADD_F32, f32, e.add(e.mul(a, b), e.mul(e.ld(e.f32(), 3), e.ld(e.f32(), 4))))
OP(MULW_F64) {
    Rv a = e.cast(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.mul(a, e.ld(e.f64(), 2)));
    e.next();
}
OP(DIVW_F64) {
    Rv a = e.cast(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.bin(GCC_JIT_BINARY_OP_DIVIDE, a, e.ld(e.f64(), 2)));
    e.next();
}
OP(ADDW_F64) {
    Rv a = e.cast(e.ld(e.f32(), 1), e.f64());
    e.st(0, e.add(a, e.ld(e.f64(), 2)));
    e.next();
}
UN(I32_TO_F32, i32, e.cast(a, e.f32()))
UN(I32_TO_F64, i32, e.cast(a, e.f64()))

// --- arrays by a run-time subscript and references ---
OP(IDX) {
    Rv rel = e.let(e.bin(GCC_JIT_BINARY_OP_MINUS, e.cast(e.ld(e.i32(), 2), e.i64()),
                         e.c64(static_cast<std::uint64_t>(static_cast<std::int64_t>(e.imm32(3))))));
    e.trapIf(e.cmp(GCC_JIT_COMPARISON_GE, e.cast(rel, e.u64()), e.cu64(e.w(5))), Trap::ArrayBounds);
    const std::uint32_t word = e.w(1);
    Rv off = e.c32(bytecode::addressOffset(word));
    const std::uint32_t tag = bytecode::addressTag(word);
    if (tag != bytecode::kTagAbsolute) {
        gcc_jit_param* p = gcc_jit_function_get_param(e.fn, tag == bytecode::kTagThis ? 1 : 2);
        off = e.add(e.cast(gcc_jit_param_as_rvalue(p), e.i32()), off);
    }
    e.st(0, e.add(off, e.mul(e.cast(rel, e.i32()), e.c32(e.w(4)))));
    e.next();
}
OP(LDX_S16) {
    e.st(0, e.cast(e.loadAt(e.i16(), e.element(1, 2)), e.i32()));
    e.next();
}
#define STX(name, T)                                                                                                   \
    OP(name) {                                                                                                         \
        Rv p = e.element(1, 2);                                                                                        \
        e.storeAt(p, e.ld(e.T(), 0));                                                                                  \
        e.next();                                                                                                      \
    }
STX(STX_16, i16)
STX(STX_32, i32)
OP(LDX_N) {
    e.copy(e.addr(0), e.element(1, 2), e.w(4));
    e.next();
}
OP(STX_N) {
    Rv p = e.element(1, 2);
    e.copy(p, e.addr(0), e.w(4));
    e.next();
}
OP(ADDX_F32) {
    Rv p = e.element(1, 2);
    Rv a = e.ld(e.f32(), 6);
    e.st(0, e.add(a, e.loadAt(e.f32(), p)));
    e.next();
}
OP(STI_N) {
    Rv p = e.deref(0, e.w(2), true);
    e.copy(p, e.addr(1), e.w(2));
    e.next();
}

// --- FOR back-edges ---
OP(LOOP_I32_IMM) {
    Rv v = e.ld(e.i32(), 0);
    Blk again = e.fresh();
    e.cond(e.cmp(GCC_JIT_COMPARISON_LE, v, e.c32(e.w(1))), again, e.following());
    e.blk = again;
    e.st(0, e.add(v, e.c32(e.w(2))));
    e.loopBack(e.w(3));
}
OP(LOOP_I16_IMM) {
    Rv v = e.ld(e.i32(), 0);
    Blk again = e.fresh();
    e.cond(e.cmp(GCC_JIT_COMPARISON_LE, v, e.c32(e.w(2))), again, e.following());
    e.blk = again;
    Rv next = e.let(e.add(v, e.c32(e.w(3))));
    e.st(0, next);
    e.st(1, e.cast(next, e.i16()));
    e.loopBack(e.w(4));
}

#undef OP
#undef BIN
#undef UN
#undef JCMP
#undef JCMPI
#undef STX

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

// The instruction starts reachable from `entry`, or the first one not translated.
bool reachable(const bytecode::Module& module, std::uint32_t entry, std::vector<bool>& starts, std::uint32_t& bad) {
    starts.assign(module.code.size() + 1, false);
    std::vector<std::uint32_t> work{entry};
    while (!work.empty()) {
        const std::uint32_t pc = work.back();
        work.pop_back();
        if (pc >= module.code.size() || starts[pc]) {
            continue;
        }
        starts[pc] = true;
        const std::uint32_t opWord = module.code[pc];
        if (opWord >= bytecode::kOpcodeCount || !kSupported[opWord]) {
            bad = pc;
            return false;
        }
        const bytecode::OpcodeInfo& info = bytecode::kOpcodeInfo[opWord];
        for (std::uint32_t k = 0; k < info.operandCount; ++k) {
            if (info.operands[k].kind == bytecode::OperandKind::Jump) {
                work.push_back(module.code[pc + 1 + info.operands[k].word]);
            }
        }
        const auto op = static_cast<Opcode>(opWord);
        if (op != Opcode::RET && op != Opcode::JMP) {
            work.push_back(pc + info.length);
        }
    }
    return true;
}

class GccModule final : public native::CompiledModule {
public:
    GccModule(gcc_jit_result* result, std::vector<native::Entry> entries)
        : result_(result), entries_(std::move(entries)) {}
    ~GccModule() override { gcc_jit_result_release(result_); }
    GccModule(const GccModule&) = delete;
    GccModule& operator=(const GccModule&) = delete;
    [[nodiscard]] native::Entry entry(std::uint32_t pou) const noexcept override {
        return pou < entries_.size() ? entries_[pou] : nullptr;
    }

private:
    gcc_jit_result* result_; // owns the code the entries point into
    std::vector<native::Entry> entries_;
};

void translateBody(Emitter& e, const bytecode::Module& module, std::uint32_t entry, const std::vector<bool>& starts) {
    Blk start = e.fresh();
    e.blk = start;
    auto field = [&](int k) {
        return gcc_jit_lvalue_as_rvalue(gcc_jit_rvalue_dereference_field(e.ctx, nullptr, e.ctxField[k]));
    };
    e.ticks = gcc_jit_function_new_local(e.fn, nullptr, e.u64(), "ticks");
    gcc_jit_block_add_assignment(e.blk, nullptr, e.ticks, field(0));
    e.abort = e.let(field(1));
    for (std::uint32_t k = 1; k <= 2; ++k) {
        Rv off = gcc_jit_param_as_rvalue(gcc_jit_function_get_param(e.fn, static_cast<int>(k)));
        e.base[k] =
            e.let(gcc_jit_lvalue_get_address(gcc_jit_context_new_array_access(e.cx, nullptr, e.image, off), nullptr));
    }
    e.base[0] = e.image;
    std::vector<Blk> blocks(module.code.size() + 1, nullptr);
    for (std::size_t pc = 0; pc < starts.size(); ++pc) {
        if (starts[pc]) {
            blocks[pc] = e.fresh();
        }
    }
    e.blocks = &blocks;
    e.goTo(blocks[entry]);
    e.code = module.code.data();
    for (std::size_t pc = 0; pc < starts.size(); ++pc) {
        if (starts[pc]) {
            e.pc = static_cast<std::uint32_t>(pc);
            e.blk = blocks[pc];
            kEmit[module.code[pc]](e);
        }
    }
}

} // namespace

Result compile(const bytecode::Module& module, const std::string& cpu) {
    Result result;
    std::vector<std::pair<std::uint32_t, std::vector<bool>>> bodies;
    for (std::uint32_t p = 0; p < module.pous.size(); ++p) {
        const bytecode::PouEntry& pou = module.pous[p];
        if (pou.code == bytecode::kNone || pou.native != bytecode::kNone) {
            continue;
        }
        std::vector<bool> starts;
        if (!reachable(module, pou.code, starts, result.unsupportedPc)) {
            result.unsupportedOp = module.code[result.unsupportedPc];
            return result;
        }
        bodies.emplace_back(p, std::move(starts));
    }

    gcc_jit_context* cx = gcc_jit_context_acquire();
    gcc_jit_context_set_int_option(cx, GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, 2);
    for (const char* option : {"-fwrapv", "-fno-strict-aliasing", "-ffp-contract=off", "-fno-math-errno"}) {
        gcc_jit_context_add_command_line_option(cx, option);
    }
    // LLVM's JITTargetMachineBuilder::detectHost() compiles for the host CPU; libgccjit has no
    // -march=native (the driver expands it, and libgccjit passes options to the compiler proper),
    // so the CPU has to be named.
    if (!cpu.empty()) {
        gcc_jit_context_add_command_line_option(cx, ("-march=" + cpu).c_str());
    }
    Emitter proto;
    proto.cx = cx;
    Ty u64 = proto.u64();
    Ty abortPtr =
        gcc_jit_type_get_pointer(gcc_jit_type_get_const(gcc_jit_type_get_volatile(proto.type(GCC_JIT_TYPE_UINT8_T))));
    // native::RunContext, field for field.
    proto.ctxField = {gcc_jit_context_new_field(cx, nullptr, u64, "ticks"),
                      gcc_jit_context_new_field(cx, nullptr, abortPtr, "abort"),
                      gcc_jit_context_new_field(cx, nullptr, proto.u32(), "pc"),
                      gcc_jit_context_new_field(cx, nullptr, proto.type(GCC_JIT_TYPE_VOID_PTR), "host")};
    Ty ctxPtr = gcc_jit_type_get_pointer(
        gcc_jit_struct_as_type(gcc_jit_context_new_struct_type(cx, nullptr, "RunContext", 4, proto.ctxField.data())));
    std::map<Ty, Ty> unaligned;
    std::map<std::string, gcc_jit_function*> imported;
    for (const auto& [p, starts] : bodies) {
        // native::Entry; the call depth is unused, as no call is translated.
        std::array<gcc_jit_param*, 5> params{gcc_jit_context_new_param(cx, nullptr, proto.bytePtr(), "image"),
                                             gcc_jit_context_new_param(cx, nullptr, proto.u32(), "thisOffset"),
                                             gcc_jit_context_new_param(cx, nullptr, proto.u32(), "frameOffset"),
                                             gcc_jit_context_new_param(cx, nullptr, ctxPtr, "ctx"),
                                             gcc_jit_context_new_param(cx, nullptr, proto.u32(), "depth")};
        Emitter e = proto;
        e.fn = gcc_jit_context_new_function(cx, nullptr, GCC_JIT_FUNCTION_EXPORTED, proto.u32(),
                                            ("pou" + std::to_string(p)).c_str(), 5, params.data(), 0);
        e.image = gcc_jit_param_as_rvalue(params[0]);
        e.ctx = gcc_jit_param_as_rvalue(params[3]);
        e.unaligned = &unaligned;
        e.imported = &imported;
        e.constSize = module.constSize;
        e.imageSize = static_cast<std::uint64_t>(module.constSize) + module.globalSize + module.stackSize;
        translateBody(e, module, module.pous[p].code, starts);
    }
    gcc_jit_result* compiled = gcc_jit_context_compile(cx);
    if (compiled == nullptr) {
        const char* why = gcc_jit_context_get_first_error(cx);
        result.error = why != nullptr ? why : "gcc_jit_context_compile failed";
        gcc_jit_context_release(cx);
        return result;
    }
    gcc_jit_context_release(cx);
    std::vector<native::Entry> entries(module.pous.size(), nullptr);
    for (const auto& body : bodies) {
        entries[body.first] = reinterpret_cast<native::Entry>(
            gcc_jit_result_get_code(compiled, ("pou" + std::to_string(body.first)).c_str()));
    }
    result.code = std::make_unique<GccModule>(compiled, std::move(entries));
    return result;
}

} // namespace takt::bench::gccjit
