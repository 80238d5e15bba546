// Standard functions that go through natives or need more than one instruction: the string
// functions, text conversions (dates and times included), BCD, EXPT, ATAN2, MUL_TIME/DIV_TIME
// (also by a REAL), CONCAT_DATE_TOD, CONCAT_DATE/TOD/DT, SPLIT_DATE/TOD/DT and DAY_OF_WEEK. Native argument blocks
// follow opcodes.def (CALL_NATIVE): 8-byte slots, slot 0 the result, integers as int64, reals as double, strings as
// image offset + capacity.
#include <algorithm>
#include <bit>

#include "codegen/lower.h"
#include "sema/stdlib.h"

namespace takt::compiler::codegen {

using bc::Opcode;

namespace {

Operand slotOf(Operand block, std::uint32_t k) {
    return Operand{block.word + 8 * k, block.global};
}

} // namespace

Operand Lowerer::nativeBlock(std::uint32_t args) {
    return frameSlot(8 * (args + 1), 8);
}

void Lowerer::nativeIntArg(Operand block, std::uint32_t k, const ast::Expr& arg) {
    const Type* t = stripAlias(arg.type);
    const bool unsignedArg = calcOf(t) == Calc::U32 || calcOf(t) == Calc::U64 || calcOf(t) == Calc::Bool;
    const Type* wide = g_.model().types.get(unsignedArg ? TypeKind::ULInt : TypeKind::LInt);
    const Value v = eval(arg, wide, slotOf(block, k));
    if (v.at.word != slotOf(block, k).word || v.at.global) {
        emit(Opcode::MOV_64, {slotOf(block, k), v.at});
    }
}

void Lowerer::nativeStringArg(Operand block, std::uint32_t k, const ast::Expr& arg, const Type* as) {
    const Value v = eval(arg, as != nullptr && isString(as) ? as : arg.type);
    emit(Opcode::ADDR, {slotOf(block, k), v.at});
}

Value Lowerer::nativeStringResult(Operand block, const Type* type) {
    const auto* st = static_cast<const StringType*>(stripAlias(type));
    const Operand out = frameSlot(st->size, 8);
    emit(Opcode::ADDR, {block, out});
    emit(Opcode::MOVI_32, {Operand{block.word + 4, false}, imm(st->length)});
    return Value{out, st->kind() == TypeKind::WString ? Calc::WStr : Calc::Str, type};
}

Value Lowerer::changeStringWidth(const Value& v, const Type* to, Span span) {
    const bool toWide = stripAlias(to)->kind() == TypeKind::WString;
    const Operand block = nativeBlock(1);
    emit(Opcode::ADDR, {slotOf(block, 1), v.at});
    const Value r = nativeStringResult(block, to);
    callNative(toWide ? bc::Native::StringToWstring : bc::Native::WstringToString, block, span);
    return r;
}

void Lowerer::callNative(bc::Native n, Operand block, Span span) {
    debugAt(span);
    emit(Opcode::CALL_NATIVE, {imm(static_cast<std::uint32_t>(n)), block});
}

Value Lowerer::timeByReal(ast::BinaryOp op, const ast::Expr& time, const ast::Expr& factor, const Type* type,
                          std::optional<Operand> dest) {
    // ns as LREAL, scaled, rounded half to even back to int64 (exact up to 2^53 ns, ~104 days).
    const Type* lreal = g_.model().types.get(TypeKind::LReal);
    const Value a = eval(time, lreal);
    const Value b = eval(factor, lreal);
    if (op == ast::BinaryOp::Div) { // like DIV_TIME by 0: a run-time fault, not an infinite time
        std::vector<std::uint32_t> ok;
        const Operand zero = frameSlot(4, 4);
        emit(Opcode::EQ_F64, {zero, b.at, constant64(0)});
        emitJump(Opcode::JMP_F, {zero}, ok);
        debugAt(span_);
        emit(Opcode::TRAP, {imm(static_cast<std::uint32_t>(bc::Trap::DivByZero))});
        patch(ok, here());
    }
    const Operand r = frameSlot(8, 8);
    emit(op == ast::BinaryOp::Mul ? Opcode::MUL_F64 : Opcode::DIV_F64, {r, a.at, b.at});
    const Operand d = dest ? *dest : frameSlot(8, 8);
    emit(Opcode::F64_TO_I64, {d, r});
    return Value{d, Calc::I64, type};
}

Value Lowerer::dateToDate(const ast::Expr& arg, const Type* to) {
    // DT (nanoseconds since 1970-01-01) to DATE keeps the midnight, to TOD the time of day;
    // between a type and its L-variant the value is the same.
    const Type* lint = g_.model().types.get(TypeKind::LInt);
    const Value v = eval(arg, lint);
    const TypeKind fk = stripAlias(arg.type)->kind();
    const TypeKind tk = stripAlias(to)->kind();
    const bool fromDt = fk == TypeKind::Dt || fk == TypeKind::Ldt;
    const bool toDate = tk == TypeKind::Date || tk == TypeKind::LDate;
    const bool toTod = tk == TypeKind::Tod || tk == TypeKind::LTod;
    if (!fromDt || (!toDate && !toTod)) {
        return Value{v.at, Calc::I64, to};
    }
    constexpr std::uint64_t kDayNs = 86'400'000'000'000ull;
    const Operand tod = frameSlot(8, 8);
    emit(Opcode::MOD_I64, {tod, v.at, constant64(kDayNs)});
    if (toTod) {
        return Value{tod, Calc::I64, to};
    }
    const Operand day = frameSlot(8, 8);
    emit(Opcode::SUB_I64, {day, v.at, tod});
    return Value{day, Calc::I64, to};
}

std::optional<Value> Lowerer::countConversion(const ast::Expr& arg, const Type* to) {
    // The number counts milliseconds (TIME, TOD) or seconds (DATE, DT) as in CODESYS
    // (sema::nanosPerCount); the L-variants count nanoseconds, their values convert unchanged.
    // const_eval.cpp folds constant arguments with the same operations.
    const Type* from = stripAlias(arg.type);
    const bool fromTime = isTimeLike(from) || isDateLike(from);
    if (fromTime == (isTimeLike(to) || isDateLike(to))) {
        return std::nullopt;
    }
    const std::int64_t unit = nanosPerCount(fromTime ? from : to);
    if (unit <= 1) {
        return std::nullopt;
    }
    const Type* lint = g_.model().types.get(TypeKind::LInt);
    const Type* lreal = g_.model().types.get(TypeKind::LReal);
    const std::uint64_t unitBits = static_cast<std::uint64_t>(unit);
    const std::uint64_t unitReal = std::bit_cast<std::uint64_t>(static_cast<double>(unit));
    const Operand d = frameSlot(8, 8);
    if (fromTime) {
        const Value ns = eval(arg, lint);
        const Calc c = calcOf(to);
        if (c == Calc::F32 || c == Calc::F64) { // in LREAL, rounded once more to REAL
            emit(Opcode::I64_TO_F64, {d, ns.at});
            emit(Opcode::DIV_F64, {d, d, constant64(unitReal)});
            return convert(Value{d, Calc::F64, lreal}, to);
        }
        // Whole counts, truncated toward zero, then to the target as LINT_TO_<type> (wrapping).
        emit(Opcode::DIV_I64, {d, ns.at, constant64(unitBits)});
        return narrow(convert(Value{d, Calc::I64, lint}, to), to);
    }
    const Calc f = calcOf(from);
    if (f == Calc::F32 || f == Calc::F64 || from->kind() == TypeKind::RealLiteral) {
        // Scaled in LREAL, rounded to nearest (ties to even), saturated to the LINT range.
        const Value x = eval(arg, lreal);
        emit(Opcode::MUL_F64, {d, x.at, constant64(unitReal)});
        emit(Opcode::F64_TO_I64, {d, d});
        return Value{d, Calc::I64, to};
    }
    // Integers, bit strings, BOOL: the 64-bit product keeps its low bits, as integer conversions wrap.
    const Value n = eval(arg, lint);
    emit(Opcode::MUL_I64, {d, n.at, constant64(unitBits)});
    return Value{d, Calc::I64, to};
}

std::optional<Value> Lowerer::toText(const ast::Expr& arg, const Type* to, Span span) {
    const Type* from = stripAlias(arg.type);
    if (from->kind() == TypeKind::Char || from->kind() == TypeKind::WChar) {
        // The one-character text: the code unit, zero-extended to 4 bytes, is already a
        // terminated STRING[3] / WSTRING[1] (empty for the character 0).
        const bool wideChar = from->kind() == TypeKind::WChar;
        const Value c = eval(arg, from);
        const Operand text = frameSlot(8, 8);
        emit(Opcode::MOV_32, {text, c.at});
        const Value v{text, wideChar ? Calc::WStr : Calc::Str, g_.stringType(wideChar, wideChar ? 1 : 3)};
        return (stripAlias(to)->kind() == TypeKind::WString) == wideChar ? v : changeStringWidth(v, to, span);
    }
    if (stripAlias(to)->kind() == TypeKind::WString) { // the STRING text, widened
        const StringType* text = g_.stringType(false, static_cast<const StringType*>(stripAlias(to))->length);
        auto v = toText(arg, text, span);
        return v ? std::optional<Value>(changeStringWidth(*v, to, span)) : std::nullopt;
    }
    bc::Native n = bc::Native::IntToString;
    switch (calcOf(from)) {
    case Calc::Bool: n = bc::Native::BoolToString; break;
    case Calc::F32: n = bc::Native::Real32ToString; break;
    case Calc::F64: n = bc::Native::RealToString; break;
    case Calc::U32:
    case Calc::U64: n = bc::Native::UintToString; break;
    case Calc::I64: n = isTimeLike(from) ? bc::Native::TimeToString : bc::Native::IntToString; break;
    case Calc::I32: break;
    default: return std::nullopt;
    }
    if (isDateLike(from)) { // the literal form: D#2024-01-31, TOD#12:30:00, DT#…, LDATE#… for the L-variants
        const TypeKind k = from->kind();
        const bool isLong = k == TypeKind::LDate || k == TypeKind::LTod || k == TypeKind::Ldt;
        const Operand block = nativeBlock(2);
        const Value r = nativeStringResult(block, to);
        nativeIntArg(block, 1, arg);
        emit(Opcode::MOV_64, {slotOf(block, 2), constant64(isLong ? 1 : 0)});
        callNative(k == TypeKind::Date || k == TypeKind::LDate ? bc::Native::DateToString
                   : k == TypeKind::Tod || k == TypeKind::LTod ? bc::Native::TodToString
                                                               : bc::Native::DtToString,
                   block, span);
        return r;
    }
    const Operand block = nativeBlock(1);
    const Value r = nativeStringResult(block, to);
    if (n == bc::Native::RealToString) {
        const Value v = eval(arg, g_.model().types.get(TypeKind::LReal));
        emit(Opcode::MOV_64, {slotOf(block, 1), v.at});
    } else if (n == bc::Native::Real32ToString) {
        const Value v = eval(arg, g_.model().types.get(TypeKind::Real));
        emit(Opcode::MOV_32, {slotOf(block, 1), v.at});
    } else {
        nativeIntArg(block, 1, arg);
    }
    callNative(n, block, span);
    return r;
}

std::optional<Value> Lowerer::fromText(const ast::Expr& arg, const Type* to, Span span) {
    const Type* from = stripAlias(arg.type);
    const Type* target = stripAlias(to);
    if (calcOf(target) == Calc::Agg) {
        return std::nullopt;
    }
    const Type* lint = g_.model().types.get(TypeKind::LInt);
    if (target->kind() == TypeKind::Char || target->kind() == TypeKind::WChar) {
        // The first character (0 for an empty text); WSTRING to CHAR through the STRING form.
        const bool wideChar = target->kind() == TypeKind::WChar;
        Value text = eval(arg, arg.type);
        if ((from->kind() == TypeKind::WString) != wideChar) {
            text = changeStringWidth(text, g_.stringType(wideChar, 1), span);
        }
        const Operand d = frameSlot(4, 4);
        emit(wideChar ? Opcode::ZX_16_32 : Opcode::ZX_8_32, {d, text.at});
        return Value{d, Calc::U32, to};
    }
    const Operand block = nativeBlock(2);
    if (from->kind() == TypeKind::WString) {
        const Value text = changeStringWidth(eval(arg, arg.type),
                                             g_.stringType(false, static_cast<const StringType*>(from)->length), span);
        emit(Opcode::ADDR, {slotOf(block, 1), text.at});
    } else {
        nativeStringArg(block, 1, arg);
    }
    if (isDateLike(target) || isTimeLike(target)) { // the literal forms, with or without the prefix
        const TypeKind k = target->kind();
        callNative(isTimeLike(target)                            ? bc::Native::StringToTime
                   : k == TypeKind::Date || k == TypeKind::LDate ? bc::Native::StringToDate
                   : k == TypeKind::Tod || k == TypeKind::LTod   ? bc::Native::StringToTod
                                                                 : bc::Native::StringToDt,
                   block, span);
        return Value{block, Calc::I64, to};
    }
    // Which literal forms and range the text must have (docs/language-notes.md).
    const TypeKind k = target->kind();
    const bool isNumber = k >= TypeKind::Bool && k <= TypeKind::LReal; // else read as LINT
    const std::uint32_t number =
        isNumber ? static_cast<std::uint32_t>(k) : static_cast<std::uint32_t>(bc::TextNumber::Lint);
    static_assert(static_cast<std::uint32_t>(TypeKind::LReal) == static_cast<std::uint32_t>(bc::TextNumber::Lreal) &&
                  static_cast<std::uint32_t>(TypeKind::ULInt) == static_cast<std::uint32_t>(bc::TextNumber::Ulint));
    emit(Opcode::MOV_64, {slotOf(block, 2), constant64(number)});
    if (isReal(target)) {
        callNative(bc::Native::StringToReal, block, span);
        return convert(Value{block, Calc::F64, g_.model().types.get(TypeKind::LReal)}, to);
    }
    callNative(bc::Native::StringToInt, block, span);
    if (calcOf(target) == Calc::Bool) {
        const Operand d = frameSlot(4, 4);
        emit(Opcode::TO_BOOL_64, {d, block});
        return Value{d, Calc::Bool, to};
    }
    return narrow(convert(Value{block, Calc::I64, lint}, to), to);
}

std::vector<const ast::Expr*> standardInputs(const ast::CallExpr& e, const sema::StdSignature& sig) {
    std::vector<std::pair<std::uint32_t, const ast::Expr*>> bound;
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const ast::Argument& a = e.args[i];
        const auto slot = i < e.stdSlots.size() ? e.stdSlots[i] : static_cast<std::uint32_t>(i);
        const bool output = a.output || (slot < sig.params.size() && sig.params[slot].output);
        if (!output && a.value != nullptr) {
            bound.emplace_back(slot, a.value.get());
        }
    }
    std::stable_sort(bound.begin(), bound.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<const ast::Expr*> out;
    out.reserve(bound.size());
    for (const auto& b : bound) {
        out.push_back(b.second);
    }
    return out;
}

Value Lowerer::splitDate(const ast::CallExpr& e, const sema::StdSignature& sig, const ast::Expr& in) {
    // The native writes every field to the slot after its parameter's (IN is parameter 0, in
    // slot 1); each connected output then receives its field in its own type.
    const auto fields = static_cast<std::uint32_t>(sig.params.size() - 1);
    const Operand block = nativeBlock(1 + fields);
    nativeIntArg(block, 1, in);
    callNative(sig.op == sema::StdOp::SplitDate  ? bc::Native::SplitDate
               : sig.op == sema::StdOp::SplitTod ? bc::Native::SplitTod
                                                 : bc::Native::SplitDt,
               block, e.span);
    const Type* lint = g_.model().types.get(TypeKind::LInt);
    for (std::size_t i = 0; i < e.args.size() && i < e.stdSlots.size(); ++i) {
        const std::uint32_t slot = e.stdSlots[i];
        if (slot == 0 || slot >= sig.params.size() || e.args[i].value == nullptr) {
            continue;
        }
        const std::uint32_t mark = frameTop_;
        const Loc dst = locate(*e.args[i].value);
        store(dst, convert(Value{slotOf(block, slot + 1), Calc::I64, lint}, dst.type));
        frameTop_ = mark;
    }
    return Value{constant64(0), Calc::Bool, g_.model().types.get(TypeKind::Bool)};
}

std::optional<Value> Lowerer::nativeStandardCall(const ast::CallExpr& e, const sema::StdSignature& sig,
                                                 const std::vector<const ast::Expr*>& args, const Type* want,
                                                 std::optional<Operand> dest) {
    using sema::StdOp;
    const Type* rt = e.type;
    const Type* t = e.genericType != nullptr ? e.genericType : rt;
    auto finish = [&](Value v) { return want != nullptr ? convert(v, want, dest) : v; };
    const Type* lint = g_.model().types.get(TypeKind::LInt);
    const bool wide = [&] {
        for (const ast::Expr* a : args) {
            if (a->type != nullptr && stripAlias(a->type)->kind() == TypeKind::WString) {
                return true;
            }
        }
        return rt != nullptr && stripAlias(rt)->kind() == TypeKind::WString;
    }();
    switch (sig.op) {
    case StdOp::Len:
    case StdOp::Find: {
        const Operand block = nativeBlock(static_cast<std::uint32_t>(args.size()));
        for (std::uint32_t k = 0; k < args.size(); ++k) {
            nativeStringArg(block, k + 1, *args[k], t);
        }
        const bool len = sig.op == StdOp::Len;
        callNative(wide ? (len ? bc::Native::WLen : bc::Native::WFind) : (len ? bc::Native::Len : bc::Native::Find),
                   block, e.span);
        return finish(convert(Value{block, Calc::I64, lint}, rt));
    }
    case StdOp::Left:
    case StdOp::Right:
    case StdOp::Mid:
    case StdOp::Concat:
    case StdOp::Insert:
    case StdOp::Delete:
    case StdOp::Replace: {
        // CONCAT is extensible: fold left to right through temporaries of the result's length.
        if (sig.op == StdOp::Concat) {
            Value acc{};
            for (std::size_t i = 1; i < args.size(); ++i) {
                const Operand block = nativeBlock(2);
                if (i == 1) {
                    nativeStringArg(block, 1, *args[0], t);
                } else {
                    emit(Opcode::ADDR, {slotOf(block, 1), acc.at});
                }
                nativeStringArg(block, 2, *args[i], t);
                acc = nativeStringResult(block, rt);
                callNative(wide ? bc::Native::WConcat : bc::Native::Concat, block, e.span);
            }
            return finish(acc);
        }
        const Operand block = nativeBlock(static_cast<std::uint32_t>(args.size()));
        for (std::uint32_t k = 0; k < args.size(); ++k) {
            if (isString(args[k]->type)) {
                nativeStringArg(block, k + 1, *args[k], t);
            } else {
                nativeIntArg(block, k + 1, *args[k]);
            }
        }
        const Value r = nativeStringResult(block, rt);
        static const bc::Native kNative[] = {bc::Native::Left,   bc::Native::Right,  bc::Native::Mid,
                                             bc::Native::Concat, bc::Native::Insert, bc::Native::Delete,
                                             bc::Native::Replace};
        static const bc::Native kWide[] = {bc::Native::WLeft,   bc::Native::WRight,  bc::Native::WMid,
                                           bc::Native::WConcat, bc::Native::WInsert, bc::Native::WDelete,
                                           bc::Native::WReplace};
        const auto which = static_cast<std::size_t>(static_cast<int>(sig.op) - static_cast<int>(StdOp::Left));
        callNative(wide ? kWide[which] : kNative[which], block, e.span);
        return finish(r);
    }
    case StdOp::Convert: {
        const Type* from = stripAlias(args[0]->type);
        const Type* to = stripAlias(rt);
        if (isDateLike(from) && isDateLike(to)) {
            return finish(dateToDate(*args[0], rt));
        }
        if (isString(from) && isString(to)) { // STRING_TO_WSTRING, WSTRING_TO_STRING
            const Value v = eval(*args[0], args[0]->type);
            return finish(from->kind() == to->kind() ? v : changeStringWidth(v, rt, e.span));
        }
        if (isString(to)) {
            auto v = toText(*args[0], rt, e.span);
            if (!v) {
                break;
            }
            return finish(*v);
        }
        if (isString(from)) {
            auto v = fromText(*args[0], rt, e.span);
            if (!v) {
                break;
            }
            return finish(*v);
        }
        break;
    }
    case StdOp::ToBcd:
    case StdOp::FromBcd: {
        const Operand block = nativeBlock(1);
        nativeIntArg(block, 1, *args[0]);
        const Calc fromCalc = calcOf(args[0]->type);
        if (sig.op == StdOp::ToBcd && (fromCalc == Calc::I32 || fromCalc == Calc::I64)) {
            // A negative value has no BCD form: InvalidArgument, like an invalid BCD digit.
            std::vector<std::uint32_t> ok;
            emitJump(Opcode::JGE_I64, {slotOf(block, 1), constant64(0)}, ok);
            debugAt(e.span);
            emit(Opcode::TRAP, {imm(static_cast<std::uint32_t>(bc::Trap::InvalidArgument))});
            patch(ok, here());
        }
        callNative(sig.op == StdOp::ToBcd ? bc::Native::ToBcd : bc::Native::FromBcd, block, e.span);
        // The result keeps the digits that fit its width (TO_BCD of 12345 to a WORD gives 16#2345).
        const Value r = convert(Value{block, Calc::U64, g_.model().types.get(TypeKind::ULInt)}, rt);
        return finish(narrow(r, rt));
    }
    case StdOp::Expt: {
        const Calc c = calcOf(t);
        if (c == Calc::F32 || c == Calc::F64) {
            const Value a = eval(*args[0], t);
            const Value b = eval(*args[1], t);
            const Operand d = frameSlot(8, 8);
            emit(c == Calc::F32 ? Opcode::EXPT_F32 : Opcode::EXPT_F64, {d, a.at, b.at});
            return finish(Value{d, c, t});
        }
        const Operand block = nativeBlock(2);
        emit(Opcode::MOV_64, {slotOf(block, 1), eval(*args[0], lint).at});
        emit(Opcode::MOV_64, {slotOf(block, 2), eval(*args[1], lint).at});
        callNative(bc::Native::ExptInt, block, e.span);
        return finish(narrow(convert(Value{block, Calc::I64, lint}, t), t));
    }
    case StdOp::Atan2: {
        const Calc c = calcOf(t);
        const Value y = eval(*args[0], t);
        const Value x = eval(*args[1], t);
        const Operand d = frameSlot(8, 8);
        emit(c == Calc::F32 ? Opcode::ATAN2_F32 : Opcode::ATAN2_F64, {d, y.at, x.at});
        return finish(Value{d, c, t});
    }
    case StdOp::Add:
    case StdOp::Sub: {
        // ADD/SUB on TIME, TOD, DT and DATE (numbers take the instruction path): like + and -.
        if (args.size() != 2) {
            break;
        }
        const Value a = eval(*args[0], lint);
        const Value b = eval(*args[1], lint);
        const Operand d = frameSlot(8, 8);
        debugAt(e.span);
        emit(arithOpcode(sig.op == StdOp::Add ? ast::BinaryOp::Add : ast::BinaryOp::Sub, Calc::I64,
                         g_.options().overflowTrap),
             {d, a.at, b.at});
        return finish(Value{d, Calc::I64, rt});
    }
    case StdOp::Mul: // MUL/DIV(TIME, ANY_NUM): MUL_TIME, DIV_TIME
    case StdOp::Div:
    case StdOp::MulTime:
    case StdOp::DivTime: {
        if (args.size() != 2) {
            break;
        }
        const ast::BinaryOp op =
            sig.op == StdOp::MulTime || sig.op == StdOp::Mul ? ast::BinaryOp::Mul : ast::BinaryOp::Div;
        if (isReal(args[1]->type)) {
            return finish(timeByReal(op, *args[0], *args[1], rt, std::nullopt));
        }
        const Value a = eval(*args[0], lint);
        const Value b = eval(*args[1], lint);
        const Operand d = frameSlot(8, 8);
        debugAt(e.span);
        emit(arithOpcode(op, Calc::I64, g_.options().overflowTrap), {d, a.at, b.at});
        return finish(Value{d, Calc::I64, rt});
    }
    case StdOp::ConcatDate:
    case StdOp::ConcatTod:
    case StdOp::ConcatDt:
    case StdOp::DayOfWeek: {
        // Fields out of range trap InvalidArgument in the native (natives_date.cpp).
        const Operand block = nativeBlock(static_cast<std::uint32_t>(args.size()));
        for (std::uint32_t k = 0; k < args.size(); ++k) {
            nativeIntArg(block, k + 1, *args[k]);
        }
        callNative(sig.op == StdOp::ConcatDate  ? bc::Native::ConcatDate
                   : sig.op == StdOp::ConcatTod ? bc::Native::ConcatTod
                   : sig.op == StdOp::ConcatDt  ? bc::Native::ConcatDt
                                                : bc::Native::DayOfWeek,
                   block, e.span);
        const Value v{block, Calc::I64, lint};
        return finish(sig.op == StdOp::DayOfWeek ? narrow(convert(v, rt), rt) : Value{block, Calc::I64, rt});
    }
    case StdOp::SplitDate:
    case StdOp::SplitTod:
    case StdOp::SplitDt: return splitDate(e, sig, *args[0]);
    case StdOp::ConcatDateTod: {
        // DATE is nanoseconds since 1970-01-01 at midnight, TOD nanoseconds since midnight.
        const Value a = eval(*args[0], lint);
        const Value b = eval(*args[1], lint);
        const Operand d = frameSlot(8, 8);
        emit(Opcode::ADD_I64, {d, a.at, b.at});
        return finish(Value{d, Calc::I64, rt});
    }
    default: break;
    }
    return std::nullopt;
}

} // namespace takt::compiler::codegen
