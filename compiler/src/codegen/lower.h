#pragma once
// Lowering of one POU body (or the init code) to instructions over the data image.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/codegen_internal.h"
#include "sema/stdlib.h"
#include "takt/bytecode/opcodes.h"
#include "takt/bytecode/traps.h"

namespace takt::compiler::codegen {

namespace bc = bytecode;

// How a value is computed: narrow integers widen to 32 bits (ARCHITECTURE.md).
enum class Calc : std::uint8_t { Bool, I32, U32, I64, U64, F32, F64, Str, WStr, Agg };

[[nodiscard]] Calc calcOf(const Type* type);
[[nodiscard]] std::uint32_t calcWidth(Calc c); // bytes of the computation form
// Bytes a scalar occupies in the image (a reference uses the low 4 of its 8-byte slot).
[[nodiscard]] std::uint32_t storeWidth(const Type* type);
// Whether an expression may fold to a compile-time constant (literals, enum values, CONSTANTs).
[[nodiscard]] bool isConstantCandidate(const ast::Expr& e);
// The instruction of an arithmetic/logic operator or comparison in a computation form.
[[nodiscard]] bc::Opcode arithOpcode(ast::BinaryOp op, Calc c, bool trap);
[[nodiscard]] bc::Opcode compareOpcode(ast::BinaryOp op, Calc c);
// The 64-bit pattern of a constant in the computation form of `calc` (none for strings).
[[nodiscard]] std::optional<std::uint64_t> constantBits(const sema::ConstValue& v, Calc calc);
// The input arguments of a standard function call in parameter order (formal arguments may come
// in any order); outputs (SPLIT_*) left out.
[[nodiscard]] std::vector<const ast::Expr*> standardInputs(const ast::CallExpr& e, const sema::StdSignature& sig);

// An operand word plus whether it addresses the globals region (patched once constants are laid out).
struct Operand {
    std::uint32_t word = 0;
    bool global = false;
};

// A storage location. Direct: the operand addresses it. Indirect: `ptr` addresses a 4-byte image
// offset to which `extra` is added (VAR_IN_OUT, REF^, array elements with run-time indices).
struct Loc {
    bool indirect = false;
    Operand at;
    std::uint32_t extra = 0;
    const Type* type = nullptr;
};

// A constant divisor of DIV_*_IMM / MOD_*_IMM: the divisor word and its reciprocal (opcodes.h).
struct ConstDivisor {
    std::uint32_t word = 0;
    std::uint64_t reciprocal = 0;
};

// A computed value: an operand in the computation form of `calc`.
struct Value {
    Operand at;
    Calc calc = Calc::I32;
    const Type* type = nullptr;
};

// The parameter each call argument binds to (formal by name, positional in order); -1 when none.
[[nodiscard]] std::vector<int> bindArguments(const ast::CallExpr& e, const std::vector<const Symbol*>& params);

class Lowerer {
public:
    Lowerer(Generator& g, const Symbol* pou) : g_(g), pou_(pou), out_(g.out()) {}

    // A FUNCTION/METHOD/FB/PROGRAM body; fills the POU entry's code range and frame size.
    void lowerPou();
    // The entry POU `index` of a program instance with arguments: inputs, CALL_FB `body`, outputs.
    void lowerProgramEntry(const Symbol& instance, std::uint32_t body, std::uint32_t index);
    // Deferred initialisers run once at cold start (this = 0: members addressed absolutely).
    void lowerInits(const std::vector<DeferredInit>& inits);

private:
    friend class StmtLowerer;
    // ---- emission ----
    std::uint32_t here() const { return static_cast<std::uint32_t>(out_.code.size()); }
    void emit(bc::Opcode op, std::initializer_list<Operand> operands);
    void emitJump(bc::Opcode op, std::initializer_list<Operand> operands, std::vector<std::uint32_t>& patches);
    void patch(const std::vector<std::uint32_t>& patches, std::uint32_t target);
    void debugAt(Span span, bool statement = false);
    static Operand imm(std::uint32_t v) { return {v, false}; }

    // ---- storage ----
    Operand frameSlot(std::uint32_t size, std::uint32_t align);
    Operand constant64(std::uint64_t bits);
    // A location; a REFERENCE TO that sema typed as its target is gone through (lower_pointers.cpp).
    Loc locate(const ast::Expr& e);
    Loc locateStorage(const ast::Expr& e);
    // The value of an integer subscript known at compile time.
    std::optional<std::int64_t> constantIndex(const ast::Expr& e);
    Loc locateSymbol(const Symbol* s, Span span);
    // The slot of `s` in the instance the POU being compiled works on (its FB's for a METHOD,
    // base FBs included); nullptr when `s` is not a member of it.
    const MemberSlot* instanceSlot(const Symbol* s);
    Operand pointerOf(const Loc& l); // a 4-byte slot holding the image offset of the location
    Operand addressOf(const Loc& l); // direct operand of the location (copies nothing for Direct)

    // ---- expressions ----
    Value eval(const ast::Expr& e, const Type* want, std::optional<Operand> dest = std::nullopt);
    Value load(const Loc& l, Calc calc);
    // load() of a location used once (an rvalue): an element selected by the IDX just emitted
    // is loaded by one LDX_* in the IDX's place instead of IDX + LDI_* (a whole struct or array
    // element by LDX_N, into `dest` when given).
    Value loadOnce(const Loc& l, Calc calc, std::optional<Operand> dest = std::nullopt);
    // The IDX just emitted when it locates exactly `l` and nothing came after it.
    [[nodiscard]] std::optional<std::uint32_t> fusableIdx(const Loc& l) const;
    // store() into an element located by the IDX just emitted: the IDX becomes `op` (STX_*,
    // STX_N) in place; false when it cannot.
    bool storeElement(const Loc& dst, const Value& v, bc::Opcode op);
    Value convert(Value v, const Type* to, std::optional<Operand> dest = std::nullopt);
    Value narrow(Value v, const Type* to);
    // REAL/LREAL `v` -> integer type `to` into d: rounded (or truncated), saturated, NaN 0.
    Value realToInt(Value v, const Type* to, bool trunc, Operand d);
    Value binary(const ast::BinaryExpr& e, const Type* want, std::optional<Operand> dest);
    // REAL x * y + z (or z + x * y) as one MULADD_* (the product rounded first), x * y + u * v
    // as one MUL2ADD_* (both products rounded first), when one side
    // of the addition `e` is a product in the same form; none otherwise (nothing emitted).
    std::optional<Value> multiplyAdd(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest);
    // Fused array idioms (lower_fused.cpp); none when the form does not apply (nothing emitted).
    // (a + b) MOD constant as one ADDMOD_*_IMM (a ring-buffer index).
    std::optional<Value> ringIndex(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest);
    // x + element or element + x as one ADDX_* (a running sum over an array).
    std::optional<Value> addElement(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest);
    // LREAL a * b, a / b, a + b where a (or for * and + either side) is a REAL widened, explicitly
    // (REAL_TO_LREAL, TO_LREAL) or by the operation: one MULW/DIVW/ADDW_F64 on the REAL.
    std::optional<Value> widenedReal(const ast::BinaryExpr& e, const Type* type, std::optional<Operand> dest);
    // The REAL expression `x` widens to LREAL, or nullptr.
    const ast::Expr* realBeforeWidening(const ast::Expr& x);
    // The divisor word and reciprocal of DIV_*_IMM / MOD_*_IMM (mod: MOD) for a constant rhs.
    std::optional<ConstDivisor> constantDivisor(const ast::Expr& rhs, Calc c, bool mod);
    // A subscript x + k or x - k (k constant): x, with `shift` = +k or -k to take off the lower
    // bound, so the IDX needs no addition of its own; e itself (shift 0) otherwise.
    const ast::Expr& offsetSubscript(const ast::Expr& e, std::int64_t lower, std::int64_t& shift);
    // d (BOOL) := a rel b, both already in computation form c (strings and BOOL included).
    Value compareInto(ast::BinaryOp rel, const Value& a, const Value& b, Calc c, Operand d);
    // ASSERT_* of TEST_PROGRAM / TEST_FUNCTION_BLOCK: the check and a failing ASSERT_FAIL.
    Value assertion(const ast::CallExpr& e, const sema::StdSignature& sig, const std::vector<const ast::Expr*>& args,
                    const Type* t);
    Value call(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest);
    // ---- CODESYS pointers and references (lower_pointers.cpp) ----
    std::optional<Value> builtinCall(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest);
    void bindReference(const ast::AssignStmt& a);
    void checkPointer(Operand pointer, const Type* target, Span span);
    Value toPointer(Value v, const Type* to, Operand d);
    // A METHOD called through an INTERFACE value (`object`): CALL_IFACE on its dispatch slot.
    Value interfaceCall(const ast::CallExpr& e, const ast::Expr& object, const Type* want, std::optional<Operand> dest);
    // An output argument `a` (x => v, x => NOT v) of an FB or PROGRAM instance: `src` into v.
    void storeOutput(const ast::Argument& a, const Loc& src);
    // An input of an FB or program instance: a VAR_IN_OUT member takes the argument's address,
    // any other input its value.
    void storeInput(Loc member, bool byReference, const ast::Expr& value);
    // The three steps of a call through a callee frame (FUNCTION, METHOD, INTERFACE method),
    // around the call instruction. First the input and VAR_IN_OUT arguments, in order (a
    // VAR_IN_OUT as its address), before anything is written into the callee's frame.
    std::vector<Value> frameArguments(const ast::CallExpr& e, const Symbol* target, const std::vector<int>& binding);
    // Then the frame above frameTop_: given inputs stored, VAR_IN_OUT addresses, missing inputs
    // copied from the template; returns its offset.
    std::uint32_t bindFrameArguments(const Generator::FrameLayout& layout, const ast::CallExpr& e, const Symbol* target,
                                     const std::vector<int>& binding, const std::vector<Value>& values);
    // After the call: outputs copied to their => variables, then the result (when there is one).
    Value frameCallResult(const Generator::FrameLayout& layout, const ast::CallExpr& e, const Symbol* target,
                          const std::vector<int>& binding, std::uint32_t frame, const Type* want,
                          std::optional<Operand> dest);
    // ---- lower_stdfn.cpp: standard functions through natives ----
    std::optional<Value> nativeStandardCall(const ast::CallExpr& e, const sema::StdSignature& sig,
                                            const std::vector<const ast::Expr*>& args, const Type* want,
                                            std::optional<Operand> dest);
    Operand nativeBlock(std::uint32_t args); // result slot + one 8-byte slot per argument
    void nativeIntArg(Operand block, std::uint32_t k, const ast::Expr& arg);
    void nativeStringArg(Operand block, std::uint32_t k, const ast::Expr& arg, const Type* as = nullptr);
    Value nativeStringResult(Operand block, const Type* type); // a temporary the native writes
    void callNative(bc::Native n, Operand block, Span span);
    std::optional<Value> toText(const ast::Expr& arg, const Type* to, Span span);   // <x>_TO_(W)STRING
    std::optional<Value> fromText(const ast::Expr& arg, const Type* to, Span span); // (W)STRING_TO_<x>
    Value dateToDate(const ast::Expr& arg, const Type* to); // DT_TO_DATE, DT_TO_TOD, LDT_TO_DT …
    // TIME, TOD, DATE, DT to or from a number counting milliseconds or seconds (TIME_TO_DINT …).
    std::optional<Value> countConversion(const ast::Expr& arg, const Type* to);
    Value changeStringWidth(const Value& v, const Type* to, Span span); // STRING <-> WSTRING
    // SPLIT_DATE/TOD/DT: the fields of `in` written to the connected outputs.
    Value splitDate(const ast::CallExpr& e, const sema::StdSignature& sig, const ast::Expr& in);
    // TIME * REAL, TIME / REAL (and MUL_TIME/DIV_TIME with a REAL factor).
    Value timeByReal(ast::BinaryOp op, const ast::Expr& time, const ast::Expr& factor, const Type* type,
                     std::optional<Operand> dest);
    Value standardCall(const ast::CallExpr& e, const Type* want, std::optional<Operand> dest);
    std::optional<Value> constantValue(const ast::Expr& e, const Type* want, std::optional<Operand> dest);
    void store(const Loc& dst, const Value& v);
    void assign(const Loc& dst, const ast::Expr& value);
    // Whether evaluating `e` writes nothing but temporaries and, unless `mayTrap`, cannot trap
    // (no run-time subscript, dereference, VAR_IN_OUT, integer division by a variable, call of
    // a user POU or a native).
    bool evaluatesQuietly(const ast::Expr& e, bool mayTrap);
    // A variable this POU addresses directly (not through a reference).
    bool directSymbol(const Symbol* s);
    // Whether `target := value` may evaluate the value before locating the target (an array
    // element), so that the element store fuses with its IDX.
    bool evaluatesFirst(const ast::Expr& target, const ast::Expr& value);
    // Jumps to the patch list when `e` evaluates to `when`.
    void condJump(const ast::Expr& e, bool when, std::vector<std::uint32_t>& patches);

    // ---- statements ----
    void lowerBody(const ast::StmtList& body);
    void lowerStmt(const ast::Stmt& s);
    void lowerFor(const ast::ForStmt& s);
    void lowerForUnsigned64(const ast::ForStmt& s, const Loc& var);
    void lowerCase(const ast::CaseStmt& s);
    void prologue();
    void edgeInputs();
    // ---- EN / ENO (lower_enable.cpp) ----
    void lowerEnabled(const ast::Stmt& s, const ast::CallExpr& c);
    void setOwnEnable(const ast::CallExpr& c, const std::function<Loc(const Symbol*)>& param);
    void ownEnoPrologue();
    void storeBool(const Loc& dst, bool value);

    Generator& g_;
    const Symbol* pou_;
    bc::Module& out_;
    bool function_ = false;                                  // FUNCTION/METHOD: locals in the frame
    std::optional<std::uint32_t> thisAbsolute_;              // init code: members of this instance
    std::unordered_map<const Symbol*, std::uint32_t> frame_; // frame offsets of FUNCTION/METHOD/TEMP variables
    std::uint32_t frameTop_ = 0;
    std::uint32_t frameMax_ = 0;
    struct LoopLabels {
        std::vector<std::uint32_t> exits;
        std::vector<std::uint32_t> continues;
    };
    std::vector<LoopLabels*> loops_;
    std::map<std::string, std::uint32_t> labelAt_;            // JMP targets: upper-case label -> code
    std::map<std::string, std::vector<std::uint32_t>> jumps_; // JMPs to patch, by upper-case label
    // FOR control variables whose 32-bit counter slot the body reads in their place.
    std::vector<std::pair<const Symbol*, Operand>> pinned_;
    // Code offset of the last IDX emitted by locate() (its result is the element pointer), or
    // kNoIdx; loadOnce() fuses it with the load when it is the last instruction.
    static constexpr std::uint32_t kNoIdx = 0xFFFFFFFFu;
    static constexpr std::uint32_t kIdxLength = 7;
    std::uint32_t lastIdx_ = kNoIdx;
    std::vector<std::uint32_t> returns_;
    Span span_{};
    const Scope* scope_ = nullptr; // where names of constant expressions resolve

    // The EN/ENO call whose statement lowerEnabled() is wrapping.
    const ast::CallExpr* guarded_ = nullptr;
};

} // namespace takt::compiler::codegen
