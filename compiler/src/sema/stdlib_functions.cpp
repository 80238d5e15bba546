// The standard function signature table (IEC 61131-3 Ed.3 tables 22-36, CODESYS-family
// conversions) and its declaration into the global scope.
#include <array>
#include <tuple>
#include <unordered_map>

#include "sema/context.h"
#include "sema/stdlib.h"
#include "takt/compiler/names.h"

namespace takt::compiler::sema {

namespace {

using F = TypeFamily;
using K = TypeKind;

constexpr std::uint32_t kDefaultStringLength = 80;

StdParam gen(std::string name, TypeFamily family) {
    return StdParam{std::move(name), family, K::Void, true, false, {}};
}
StdParam fam(std::string name, TypeFamily family) {
    return StdParam{std::move(name), family, K::Void, false, false, {}};
}
StdParam exact(std::string name, TypeKind kind) {
    return StdParam{std::move(name), F::Exact, kind, false, false, {}};
}
StdParam out(std::string name, TypeFamily family) {
    return StdParam{std::move(name), family, K::Void, false, true, {}};
}

struct ElementaryName {
    std::string_view name;
    TypeKind kind;
};

// Every elementary type name a conversion may be spelled with (long forms included).
constexpr std::array kElementaryNames{
    ElementaryName{"BOOL", K::Bool},
    ElementaryName{"SINT", K::SInt},
    ElementaryName{"INT", K::Int},
    ElementaryName{"DINT", K::DInt},
    ElementaryName{"LINT", K::LInt},
    ElementaryName{"USINT", K::USInt},
    ElementaryName{"UINT", K::UInt},
    ElementaryName{"UDINT", K::UDInt},
    ElementaryName{"ULINT", K::ULInt},
    ElementaryName{"BYTE", K::Byte},
    ElementaryName{"WORD", K::Word},
    ElementaryName{"DWORD", K::DWord},
    ElementaryName{"LWORD", K::LWord},
    ElementaryName{"REAL", K::Real},
    ElementaryName{"LREAL", K::LReal},
    ElementaryName{"TIME", K::Time},
    ElementaryName{"LTIME", K::LTime},
    ElementaryName{"DATE", K::Date},
    ElementaryName{"LDATE", K::LDate},
    ElementaryName{"TOD", K::Tod},
    ElementaryName{"TIME_OF_DAY", K::Tod},
    ElementaryName{"LTOD", K::LTod},
    ElementaryName{"LTIME_OF_DAY", K::LTod},
    ElementaryName{"DT", K::Dt},
    ElementaryName{"DATE_AND_TIME", K::Dt},
    ElementaryName{"LDT", K::Ldt},
    ElementaryName{"LDATE_AND_TIME", K::Ldt},
    ElementaryName{"CHAR", K::Char},
    ElementaryName{"WCHAR", K::WChar},
    ElementaryName{"STRING", K::String},
    ElementaryName{"WSTRING", K::WString},
};

enum class Cat : std::uint8_t { Num, Bool, Bit, Duration, DateOnly, TodOnly, DateTime, Char, Str };

Cat category(TypeKind k) {
    switch (k) {
    case K::Bool: return Cat::Bool;
    case K::Byte:
    case K::Word:
    case K::DWord:
    case K::LWord: return Cat::Bit;
    case K::Time:
    case K::LTime: return Cat::Duration;
    case K::Date:
    case K::LDate: return Cat::DateOnly;
    case K::Tod:
    case K::LTod: return Cat::TodOnly;
    case K::Dt:
    case K::Ldt: return Cat::DateTime;
    case K::Char:
    case K::WChar: return Cat::Char;
    case K::String:
    case K::WString: return Cat::Str;
    default: return Cat::Num;
    }
}

bool isRealKind(TypeKind k) {
    return k == K::Real || k == K::LReal;
}

// Which <T>_TO_<U> conversions exist: IEC table 22 plus the CODESYS-family numeric views of
// durations, dates and strings that real programs use.
bool conversionAllowed(TypeKind from, TypeKind to) {
    if (from == to) {
        return false;
    }
    const Cat a = category(from);
    const Cat b = category(to);
    auto scalar = [](Cat c) { return c == Cat::Num || c == Cat::Bool || c == Cat::Bit; };
    auto dateLike = [](Cat c) { return c == Cat::DateOnly || c == Cat::TodOnly || c == Cat::DateTime; };
    if (a == Cat::Str || b == Cat::Str) {
        return true; // every elementary value has a text form and can be parsed back
    }
    if (scalar(a) && scalar(b)) {
        return true;
    }
    if ((a == Cat::Duration && (scalar(b) || b == Cat::Duration)) || (scalar(a) && b == Cat::Duration)) {
        return true;
    }
    if ((dateLike(a) && scalar(b)) || (scalar(a) && dateLike(b))) {
        return true;
    }
    if (dateLike(a) && dateLike(b)) {
        // DT -> DATE / TOD, and the L-variants of the same kind.
        return a == b || a == Cat::DateTime;
    }
    if (a == Cat::Char || b == Cat::Char) {
        const Cat other = a == Cat::Char ? b : a;
        const TypeKind otherKind = a == Cat::Char ? to : from;
        return other == Cat::Char || other == Cat::Bit || (other == Cat::Num && !isRealKind(otherKind));
    }
    return false;
}

constexpr std::array kIntKinds{K::SInt, K::Int, K::DInt, K::LInt, K::USInt, K::UInt, K::UDInt, K::ULInt};

TypeKind bitOfWidth(TypeKind intKind) {
    switch (intKind) {
    case K::SInt:
    case K::USInt: return K::Byte;
    case K::Int:
    case K::UInt: return K::Word;
    case K::DInt:
    case K::UDInt: return K::DWord;
    default: return K::LWord;
    }
}

std::string_view kindName(TypeKind k) {
    for (const auto& e : kElementaryNames) {
        if (e.kind == k) {
            return e.name;
        }
    }
    return "?";
}

class TableBuilder {
public:
    void add(StdSignature sig) {
        const std::string key = upperName(sig.name);
        auto it = index_.find(key);
        if (it == index_.end()) {
            index_.emplace(key, order_.size());
            order_.push_back(key);
            groups_.emplace_back();
        }
        groups_[index_.at(key)].push_back(std::move(sig));
    }

    // Flattens the groups so each name's overloads are contiguous.
    void finish(std::vector<StdSignature>& sigs, std::vector<StdFunction>& fns) {
        for (std::size_t g = 0; g < groups_.size(); ++g) {
            StdFunction fn{groups_[g].front().name, static_cast<std::uint32_t>(sigs.size()),
                           static_cast<std::uint32_t>(groups_[g].size())};
            for (auto& s : groups_[g]) {
                sigs.push_back(std::move(s));
            }
            fns.push_back(std::move(fn));
        }
    }

private:
    std::unordered_map<std::string, std::size_t> index_;
    std::vector<std::string> order_;
    std::vector<std::vector<StdSignature>> groups_;
};

StdSignature sig(std::string name, StdOp op, std::vector<StdParam> params, StdResult result,
                 TypeKind resultKind = K::Void, bool extensible = false) {
    StdSignature s;
    s.name = std::move(name);
    s.op = op;
    s.params = std::move(params);
    s.result = result;
    s.resultKind = resultKind;
    s.extensible = extensible;
    return s;
}

void addConversions(TableBuilder& b) {
    for (const auto& from : kElementaryNames) {
        for (const auto& to : kElementaryNames) {
            if (!conversionAllowed(from.kind, to.kind)) {
                continue;
            }
            StdSignature s = sig(std::string(from.name) + "_TO_" + std::string(to.name), StdOp::Convert,
                                 {exact("IN", from.kind)}, StdResult::Exact, to.kind);
            s.from = from.kind;
            b.add(std::move(s));
        }
    }
    // Ed.3 overloaded conversions TO_<U>(ANY_ELEMENTARY).
    for (const auto& to : kElementaryNames) {
        b.add(sig("TO_" + std::string(to.name), StdOp::Convert, {fam("IN", F::AnyElementary)}, StdResult::Exact,
                  to.kind));
    }
    // TRUNC (Ed.2, result DINT), TRUNC_<INT> and <REAL>_TRUNC_<INT> (Ed.3).
    b.add(sig("TRUNC", StdOp::Trunc, {fam("IN", F::AnyReal)}, StdResult::Exact, K::DInt));
    for (TypeKind i : kIntKinds) {
        const std::string in(kindName(i));
        b.add(sig("TRUNC_" + in, StdOp::Trunc, {fam("IN", F::AnyReal)}, StdResult::Exact, i));
        for (TypeKind r : {K::Real, K::LReal}) {
            StdSignature s =
                sig(std::string(kindName(r)) + "_TRUNC_" + in, StdOp::Trunc, {exact("IN", r)}, StdResult::Exact, i);
            s.from = r;
            b.add(std::move(s));
        }
    }
    // BCD: <INT>_TO_BCD / BCD_TO_<INT> (the bit string of the same width), and the Ed.3
    // spellings USINT_TO_BCD_BYTE / BYTE_BCD_TO_USINT for the unsigned types.
    for (TypeKind i : kIntKinds) {
        const std::string in(kindName(i));
        const TypeKind bits = bitOfWidth(i);
        StdSignature to = sig(in + "_TO_BCD", StdOp::ToBcd, {exact("IN", i)}, StdResult::Exact, bits);
        to.from = i;
        b.add(std::move(to));
        b.add(sig("BCD_TO_" + in, StdOp::FromBcd, {fam("IN", F::AnyBit)}, StdResult::Exact, i));
        if (i == K::USInt || i == K::UInt || i == K::UDInt || i == K::ULInt) {
            const std::string bn(kindName(bits));
            StdSignature t2 = sig(in + "_TO_BCD_" + bn, StdOp::ToBcd, {exact("IN", i)}, StdResult::Exact, bits);
            t2.from = i;
            b.add(std::move(t2));
            StdSignature f2 = sig(bn + "_BCD_TO_" + in, StdOp::FromBcd, {exact("IN", bits)}, StdResult::Exact, i);
            f2.from = bits;
            b.add(std::move(f2));
        }
    }
}

void addNumericAndBits(TableBuilder& b) {
    b.add(sig("ABS", StdOp::Abs, {gen("IN", F::AnyNum)}, StdResult::Generic));
    const std::pair<const char*, StdOp> reals[] = {
        {"SQRT", StdOp::Sqrt}, {"LN", StdOp::Ln},   {"LOG", StdOp::Log},   {"EXP", StdOp::Exp},   {"SIN", StdOp::Sin},
        {"COS", StdOp::Cos},   {"TAN", StdOp::Tan}, {"ASIN", StdOp::Asin}, {"ACOS", StdOp::Acos}, {"ATAN", StdOp::Atan},
    };
    for (const auto& [name, op] : reals) {
        b.add(sig(name, op, {gen("IN", F::AnyReal)}, StdResult::Generic));
    }
    b.add(sig("ATAN2", StdOp::Atan2, {gen("Y", F::AnyReal), gen("X", F::AnyReal)}, StdResult::Generic));
    // EXPT on integers (IN2 an integer too) computes in 64 bits and wraps like `**`.
    b.add(sig("EXPT", StdOp::Expt, {gen("IN1", F::AnyInt), fam("IN2", F::AnyInt)}, StdResult::Generic));
    b.add(sig("EXPT", StdOp::Expt, {gen("IN1", F::AnyReal), fam("IN2", F::AnyNum)}, StdResult::Generic));

    // Arithmetic: ANY_NUM (ADD/MUL extensible), then the TIME/date overloads IEC allows.
    b.add(sig("ADD", StdOp::Add, {gen("IN1", F::AnyNum), gen("IN2", F::AnyNum)}, StdResult::Generic, K::Void, true));
    b.add(sig("MUL", StdOp::Mul, {gen("IN1", F::AnyNum), gen("IN2", F::AnyNum)}, StdResult::Generic, K::Void, true));
    b.add(sig("SUB", StdOp::Sub, {gen("IN1", F::AnyNum), gen("IN2", F::AnyNum)}, StdResult::Generic));
    b.add(sig("DIV", StdOp::Div, {gen("IN1", F::AnyNum), gen("IN2", F::AnyNum)}, StdResult::Generic));
    b.add(sig("MOD", StdOp::Mod, {gen("IN1", F::AnyInt), gen("IN2", F::AnyInt)}, StdResult::Generic));
    b.add(sig("MOVE", StdOp::Move, {gen("IN", F::Any)}, StdResult::Generic));
    for (auto [t, tod, dt, date] :
         {std::array{K::Time, K::Tod, K::Dt, K::Date}, std::array{K::LTime, K::LTod, K::Ldt, K::LDate}}) {
        b.add(sig("ADD", StdOp::Add, {exact("IN1", t), exact("IN2", t)}, StdResult::Exact, t));
        b.add(sig("ADD", StdOp::Add, {exact("IN1", tod), exact("IN2", t)}, StdResult::Exact, tod));
        b.add(sig("ADD", StdOp::Add, {exact("IN1", dt), exact("IN2", t)}, StdResult::Exact, dt));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", t), exact("IN2", t)}, StdResult::Exact, t));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", date), exact("IN2", date)}, StdResult::Exact, t));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", tod), exact("IN2", t)}, StdResult::Exact, tod));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", tod), exact("IN2", tod)}, StdResult::Exact, t));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", dt), exact("IN2", t)}, StdResult::Exact, dt));
        b.add(sig("SUB", StdOp::Sub, {exact("IN1", dt), exact("IN2", dt)}, StdResult::Exact, t));
        b.add(sig("MUL", StdOp::Mul, {exact("IN1", t), fam("IN2", F::AnyNum)}, StdResult::Exact, t));
        b.add(sig("DIV", StdOp::Div, {exact("IN1", t), fam("IN2", F::AnyNum)}, StdResult::Exact, t));
    }

    // Bit strings.
    for (auto [name, op] : {std::pair{"AND", StdOp::And}, std::pair{"OR", StdOp::Or}, std::pair{"XOR", StdOp::Xor}}) {
        b.add(sig(name, op, {gen("IN1", F::AnyBit), gen("IN2", F::AnyBit)}, StdResult::Generic, K::Void, true));
    }
    b.add(sig("NOT", StdOp::Not, {gen("IN", F::AnyBit)}, StdResult::Generic));
    for (auto [name, op] : {std::pair{"SHL", StdOp::Shl}, std::pair{"SHR", StdOp::Shr}, std::pair{"ROL", StdOp::Rol},
                            std::pair{"ROR", StdOp::Ror}}) {
        b.add(sig(name, op, {gen("IN", F::AnyBit), fam("N", F::AnyInt)}, StdResult::Generic));
    }
}

void addSelectionAndComparison(TableBuilder& b) {
    b.add(sig("SEL", StdOp::Sel, {exact("G", K::Bool), gen("IN0", F::Any), gen("IN1", F::Any)}, StdResult::Generic));
    b.add(sig("MAX", StdOp::Max, {gen("IN1", F::AnyElementary), gen("IN2", F::AnyElementary)}, StdResult::Generic,
              K::Void, true));
    b.add(sig("MIN", StdOp::Min, {gen("IN1", F::AnyElementary), gen("IN2", F::AnyElementary)}, StdResult::Generic,
              K::Void, true));
    b.add(sig("LIMIT", StdOp::Limit,
              {gen("MN", F::AnyElementary), gen("IN", F::AnyElementary), gen("MX", F::AnyElementary)},
              StdResult::Generic));
    // MUX(K, IN0, IN1, …): K selects IN<K>; at least two inputs.
    b.add(sig("MUX", StdOp::Mux, {fam("K", F::AnyInt), gen("IN0", F::Any), gen("IN1", F::Any)}, StdResult::Generic,
              K::Void, true));
    const std::pair<const char*, StdOp> cmps[] = {
        {"GT", StdOp::Gt}, {"GE", StdOp::Ge}, {"EQ", StdOp::Eq}, {"LE", StdOp::Le}, {"LT", StdOp::Lt},
    };
    for (const auto& [name, op] : cmps) {
        b.add(sig(name, op, {gen("IN1", F::AnyElementary), gen("IN2", F::AnyElementary)}, StdResult::Exact, K::Bool,
                  true));
    }
    b.add(
        sig("NE", StdOp::Ne, {gen("IN1", F::AnyElementary), gen("IN2", F::AnyElementary)}, StdResult::Exact, K::Bool));
}

void addStrings(TableBuilder& b) {
    b.add(sig("LEN", StdOp::Len, {gen("IN", F::AnyString)}, StdResult::Exact, K::Int));
    b.add(sig("LEFT", StdOp::Left, {gen("IN", F::AnyString), fam("L", F::AnyInt)}, StdResult::Generic));
    b.add(sig("RIGHT", StdOp::Right, {gen("IN", F::AnyString), fam("L", F::AnyInt)}, StdResult::Generic));
    b.add(sig("MID", StdOp::Mid, {gen("IN", F::AnyString), fam("L", F::AnyInt), fam("P", F::AnyInt)},
              StdResult::Generic));
    b.add(sig("CONCAT", StdOp::Concat, {gen("IN1", F::AnyString), gen("IN2", F::AnyString)}, StdResult::StringSum,
              K::Void, true));
    b.add(sig("INSERT", StdOp::Insert, {gen("IN1", F::AnyString), gen("IN2", F::AnyString), fam("P", F::AnyInt)},
              StdResult::StringSum));
    b.add(sig("DELETE", StdOp::Delete, {gen("IN", F::AnyString), fam("L", F::AnyInt), fam("P", F::AnyInt)},
              StdResult::Generic));
    b.add(sig("REPLACE", StdOp::Replace,
              {gen("IN1", F::AnyString), gen("IN2", F::AnyString), fam("L", F::AnyInt), fam("P", F::AnyInt)},
              StdResult::StringSum));
    b.add(sig("FIND", StdOp::Find, {gen("IN1", F::AnyString), gen("IN2", F::AnyString)}, StdResult::Exact, K::Int));
}

// IEC 61131-3 Ed.3 table 36: dates from and to their fields (YEAR, MONTH, DAY, HOUR, MINUTE,
// SECOND, MILLISECOND, all ANY_INT) and DAY_OF_WEEK (0 = Sunday).
void addDateFields(TableBuilder& b) {
    const auto ymd = [](bool output) {
        const auto p = output ? out : fam;
        return std::vector<StdParam>{p("YEAR", F::AnyInt), p("MONTH", F::AnyInt), p("DAY", F::AnyInt)};
    };
    const auto hmsm = [](bool output) {
        const auto p = output ? out : fam;
        return std::vector<StdParam>{p("HOUR", F::AnyInt), p("MINUTE", F::AnyInt), p("SECOND", F::AnyInt),
                                     p("MILLISECOND", F::AnyInt)};
    };
    const auto join = [](std::vector<StdParam> a, const std::vector<StdParam>& tail) {
        a.insert(a.end(), tail.begin(), tail.end());
        return a;
    };
    b.add(sig("CONCAT_DATE", StdOp::ConcatDate, ymd(false), StdResult::Exact, K::Date));
    b.add(sig("SPLIT_DATE", StdOp::SplitDate, join({exact("IN", K::Date)}, ymd(true)), StdResult::Void));
    for (auto [suffix, tod, dt] : {std::tuple{"", K::Tod, K::Dt}, std::tuple{"L", K::LTod, K::Ldt}}) {
        const std::string l = suffix;
        b.add(sig("CONCAT_" + l + "TOD", StdOp::ConcatTod, hmsm(false), StdResult::Exact, tod));
        b.add(sig("CONCAT_" + l + "DT", StdOp::ConcatDt, join(ymd(false), hmsm(false)), StdResult::Exact, dt));
        b.add(sig("SPLIT_" + l + "TOD", StdOp::SplitTod, join({exact("IN", tod)}, hmsm(true)), StdResult::Void));
        b.add(sig("SPLIT_" + l + "DT", StdOp::SplitDt, join(join({exact("IN", dt)}, ymd(true)), hmsm(true)),
                  StdResult::Void));
    }
    b.add(sig("DAY_OF_WEEK", StdOp::DayOfWeek, {exact("IN", K::Date)}, StdResult::Exact, K::Int));
    b.add(sig("DAY_OF_WEEK", StdOp::DayOfWeek, {exact("IN", K::LDate)}, StdResult::Exact, K::Int));
}

void addTimeFunctions(TableBuilder& b) {
    // CODESYS's TIME(): the PLC's clock, fixed for the cycle like the timers' (docs/language-notes.md).
    b.add(sig("TIME", StdOp::PlcTime, {}, StdResult::Exact, K::Time));
    // The date and time at the cycle's start (CODESYS has it only through vendor libraries).
    b.add(sig("NOW_DT", StdOp::NowDt, {}, StdResult::Exact, K::Dt));
    b.add(sig("NOW_LDT", StdOp::NowDt, {}, StdResult::Exact, K::Ldt));
    struct Variant {
        const char* t;
        const char* tod;
        const char* dt;
        const char* date;
        TypeKind kt, ktod, kdt, kdate;
    };
    const Variant variants[] = {{"TIME", "TOD", "DT", "DATE", K::Time, K::Tod, K::Dt, K::Date},
                                {"LTIME", "LTOD", "LDT", "LDATE", K::LTime, K::LTod, K::Ldt, K::LDate}};
    for (const auto& v : variants) {
        const std::string t = v.t;
        const std::string tod = v.tod;
        const std::string dt = v.dt;
        const std::string date = v.date;
        b.add(sig("ADD_" + t, StdOp::AddTime, {exact("IN1", v.kt), exact("IN2", v.kt)}, StdResult::Exact, v.kt));
        b.add(sig("SUB_" + t, StdOp::SubTime, {exact("IN1", v.kt), exact("IN2", v.kt)}, StdResult::Exact, v.kt));
        b.add(sig("MUL_" + t, StdOp::MulTime, {exact("IN1", v.kt), fam("IN2", F::AnyNum)}, StdResult::Exact, v.kt));
        b.add(sig("DIV_" + t, StdOp::DivTime, {exact("IN1", v.kt), fam("IN2", F::AnyNum)}, StdResult::Exact, v.kt));
        b.add(sig("ADD_" + tod + "_" + t, StdOp::AddTodTime, {exact("IN1", v.ktod), exact("IN2", v.kt)},
                  StdResult::Exact, v.ktod));
        b.add(sig("ADD_" + dt + "_" + t, StdOp::AddDtTime, {exact("IN1", v.kdt), exact("IN2", v.kt)}, StdResult::Exact,
                  v.kdt));
        b.add(sig("SUB_" + tod + "_" + t, StdOp::SubTodTime, {exact("IN1", v.ktod), exact("IN2", v.kt)},
                  StdResult::Exact, v.ktod));
        b.add(sig("SUB_" + dt + "_" + t, StdOp::SubDtTime, {exact("IN1", v.kdt), exact("IN2", v.kt)}, StdResult::Exact,
                  v.kdt));
        b.add(sig("SUB_" + date + "_" + date, StdOp::SubDateDate, {exact("IN1", v.kdate), exact("IN2", v.kdate)},
                  StdResult::Exact, v.kt));
        b.add(sig("SUB_" + tod + "_" + tod, StdOp::SubTodTod, {exact("IN1", v.ktod), exact("IN2", v.ktod)},
                  StdResult::Exact, v.kt));
        b.add(sig("SUB_" + dt + "_" + dt, StdOp::SubDtDt, {exact("IN1", v.kdt), exact("IN2", v.kdt)}, StdResult::Exact,
                  v.kt));
        b.add(sig("CONCAT_" + date + "_" + tod, StdOp::ConcatDateTod, {exact("IN1", v.kdate), exact("IN2", v.ktod)},
                  StdResult::Exact, v.kdt));
    }
    // IEC 61131-3 edition 1's names of MUL_TIME and DIV_TIME, as matiec and OpenPLC still call them.
    b.add(sig("MULTIME", StdOp::MulTime, {exact("IN1", K::Time), fam("IN2", F::AnyNum)}, StdResult::Exact, K::Time));
    b.add(sig("DIVTIME", StdOp::DivTime, {exact("IN1", K::Time), fam("IN2", F::AnyNum)}, StdResult::Exact, K::Time));
    b.add(sig("CONCAT_DATE_LTOD", StdOp::ConcatDateTod, {exact("IN1", K::Date), exact("IN2", K::LTod)},
              StdResult::Exact, K::Ldt));
    addDateFields(b);
}

void addAssertions(TableBuilder& b) {
    auto add = [&b](StdSignature s) {
        s.testOnly = true;
        // Every assertion optionally takes a trailing message that the test report shows.
        StdSignature withMessage = s;
        withMessage.params.push_back(fam("MESSAGE", F::AnyString));
        b.add(std::move(s));
        b.add(std::move(withMessage));
    };
    add(sig("ASSERT_TRUE", StdOp::AssertTrue, {exact("IN", K::Bool)}, StdResult::Void));
    add(sig("ASSERT_FALSE", StdOp::AssertFalse, {exact("IN", K::Bool)}, StdResult::Void));
    add(sig("ASSERT_EQUAL", StdOp::AssertEqual, {gen("EXPECTED", F::Any), gen("ACTUAL", F::Any)}, StdResult::Void));
    add(sig("ASSERT_NOT_EQUAL", StdOp::AssertNotEqual, {gen("EXPECTED", F::Any), gen("ACTUAL", F::Any)},
            StdResult::Void));
    const std::pair<const char*, StdOp> ordered[] = {
        {"ASSERT_GREATER", StdOp::AssertGreater},
        {"ASSERT_LESS", StdOp::AssertLess},
        {"ASSERT_GREATER_OR_EQUAL", StdOp::AssertGreaterOrEqual},
        {"ASSERT_LESS_OR_EQUAL", StdOp::AssertLessOrEqual},
    };
    // truST names these parameters VALUE and BOUND; tests written for it call them so.
    StdParam value = gen("IN1", F::AnyElementary);
    value.alias = "VALUE";
    StdParam bound = gen("IN2", F::AnyElementary);
    bound.alias = "BOUND";
    for (const auto& [name, op] : ordered) {
        add(sig(name, op, {value, bound}, StdResult::Void));
    }
    add(sig("ASSERT_NEAR", StdOp::AssertNear,
            {gen("EXPECTED", F::AnyReal), gen("ACTUAL", F::AnyReal), gen("DELTA", F::AnyReal)}, StdResult::Void));
    // CfUnit's and TcUnit's name: the test runs cycle after cycle until its body reaches this.
    StdSignature finished = sig("TEST_FINISHED", StdOp::TestFinished, {}, StdResult::Void);
    finished.testOnly = true;
    b.add(std::move(finished));
}

struct Table {
    std::vector<StdSignature> sigs;
    std::vector<StdFunction> fns;
    std::unordered_map<std::string, std::size_t> byName;
};

const Table& table() {
    static const Table t = [] {
        TableBuilder b;
        addConversions(b);
        addNumericAndBits(b);
        addSelectionAndComparison(b);
        addStrings(b);
        addTimeFunctions(b);
        addAssertions(b);
        Table out;
        b.finish(out.sigs, out.fns);
        for (std::size_t i = 0; i < out.fns.size(); ++i) {
            out.byName.emplace(upperName(out.fns[i].name), i);
        }
        return out;
    }();
    return t;
}

} // namespace

std::string_view elementaryKindName(TypeKind kind) {
    return kindName(kind);
}

const std::vector<StdSignature>& standardSignatures() {
    return table().sigs;
}
const std::vector<StdFunction>& standardFunctions() {
    return table().fns;
}

const StdFunction* findStandardFunction(std::string_view name) {
    const auto& t = table();
    auto it = t.byName.find(upperName(name));
    return it == t.byName.end() ? nullptr : &t.fns[it->second];
}

void declareStandardFunctions(Context& cx) {
    const auto& fns = standardFunctions();
    for (std::size_t i = 0; i < fns.size(); ++i) {
        Symbol* s = cx.model.newSymbol();
        s->kind = SymbolKind::StandardFunction;
        s->name = fns[i].name;
        s->stdIndex = static_cast<std::uint32_t>(i);
        const StdSignature& first = standardSignatures()[fns[i].first];
        // The symbol's type is the result when every overload agrees on it; otherwise it is
        // known only per call (CallExpr::type).
        if (first.result == StdResult::Exact && fns[i].count == 1) {
            const bool text = first.resultKind == K::String || first.resultKind == K::WString;
            s->type = text ? cx.model.types.string(first.resultKind == K::WString, kDefaultStringLength)
                           : cx.model.types.get(first.resultKind);
        } else if (first.result == StdResult::Void) {
            s->type = cx.model.types.get(K::Void);
        }
        cx.model.global->declare(s);
    }
}

} // namespace takt::compiler::sema
