// Programs, POUs and statements. Loops are bounded by construction (FOR over small ranges,
// WHILE and REPEAT with a counter only the loop writes), so every program terminates unless a
// fault ends its cycle first; faults (division by zero, bounds, MUX, FOR BY 0, overflow in trap
// mode) are left possible on purpose, rarely enough that most programs run many cycles.
#include <algorithm>
#include <array>
#include <numeric>

#include "st_gen_impl.h"

namespace takt::test {

std::uint64_t SeedChoices::next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t ByteChoices::next() {
    std::uint64_t v = 0;
    for (int i = 0; i < 2 && pos_ < size_; ++i) {
        v = (v << 8) | data_[pos_++];
    }
    return v;
}

GeneratedProgram generateProgram(Choices& choices, const GenOptions& options) {
    gen::Gen g(choices, options);
    return g.run();
}

namespace gen {

namespace {
constexpr const char* kConfiguration =
    "CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE "
    "END_CONFIGURATION\n";
}

Ty Gen::anyType(bool allowString) {
    const Ty t = static_cast<Ty>(c_.below(kTypeCount));
    return t == Ty::String && !(allowString && o_.calls) ? Ty::Dint : t;
}

std::string Gen::fresh(const char* prefix) {
    return prefix + std::to_string(names_++);
}

std::string Gen::declare(const Var& v) {
    const std::string elem = v.ty == Ty::String ? "STRING[10]" : tyName(v.ty);
    const std::string range = "ARRAY[" + std::to_string(v.lo) + ".." + std::to_string(v.hi) + "] OF ";
    switch (v.shape) {
    case Shape::Scalar: return v.name + " : " + elem + (c_.percent(30) ? " := " + literal(v.ty) : "") + ";";
    case Shape::Array: return v.name + " : " + range + elem + ";";
    case Shape::Struct: return v.name + " : S0;";
    case Shape::StructArray: return v.name + " : " + range + "S0;";
    case Shape::Instance: return v.name + " : " + fbs_[static_cast<std::size_t>(v.fb)].name + ";";
    case Shape::Ref: return v.name + " : REF_TO " + elem + ";";
    }
    return {};
}

// `count` variables of random shapes; with `allTypes`, first one scalar of every type, so every
// expression finds a variable and every VAR_IN_OUT an argument.
void Gen::addVars(std::vector<Var>& out, const char* prefix, int count, bool allTypes) {
    if (allTypes) {
        for (int t = 0; t < kTypeCount; ++t) {
            if (static_cast<Ty>(t) != Ty::String || o_.calls) {
                out.push_back({fresh(prefix), static_cast<Ty>(t)});
            }
        }
    }
    for (int n = 0; n < count; ++n) {
        Var v{fresh(prefix), anyType(true)};
        const std::uint32_t shape = c_.below(10);
        if (shape < 3) {
            v.shape = Shape::Array;
        } else if (shape == 3) {
            v.shape = Shape::Struct;
        } else if (shape == 4) {
            v.shape = Shape::StructArray;
        }
        v.lo = static_cast<int>(c_.below(4)) - 2;
        v.hi = v.lo + 1 + static_cast<int>(c_.below(6));
        out.push_back(v);
    }
}

std::string Gen::pouVars(const std::vector<Var>& vars, std::size_t from) {
    std::string out;
    for (std::size_t i = from; i < vars.size(); ++i) {
        out += "  " + declare(vars[i]) + "\n";
    }
    return out;
}

std::string Gen::lvalue(Ty& t, int depth) {
    if (c_.percent(8)) {
        for (const Var& r : scope_) {
            if (r.shape == Shape::Ref) {
                t = r.ty;
                return r.name + "^";
            }
        }
    }
    const Var* v = nullptr;
    for (int tries = 0; tries < 4 && v == nullptr; ++tries) {
        v = pickVar(anyType(true), false, true);
    }
    if (v == nullptr) {
        return {};
    }
    t = v->ty;
    std::string member;
    if (v->shape == Shape::Struct || v->shape == Shape::StructArray) {
        const Field& f = fields_[c_.below(static_cast<std::uint32_t>(fields_.size()))];
        t = f.ty;
        member = "." + f.name;
    }
    if (v->shape == Shape::Array || v->shape == Shape::StructArray) {
        return v->name + "[" + index(*v, depth) + "]" + member;
    }
    return v->name + member;
}

// A whole STRUCT (or array element of one) from another: a block copy.
std::string Gen::structCopy() {
    std::vector<const Var*> from;
    std::vector<const Var*> to;
    for (const Var& v : scope_) {
        if (v.shape == Shape::Struct || v.shape == Shape::StructArray) {
            from.push_back(&v);
            if (v.writable) {
                to.push_back(&v);
            }
        }
    }
    if (to.empty()) {
        return {};
    }
    const auto whole = [this](const Var& v) {
        return v.shape == Shape::StructArray ? v.name + "[" + index(v, 2) + "]" : v.name;
    };
    const Var& target = *to[c_.below(static_cast<std::uint32_t>(to.size()))];
    const Var& source = *from[c_.below(static_cast<std::uint32_t>(from.size()))];
    return whole(target) + " := " + whole(source) + ";\n";
}

// REF() of a writable variable or array element: never of a loop counter, which a write
// through the reference could keep from ending its loop.
std::string Gen::refTo(const Var& ref) {
    const Var* v = pickVar(ref.ty, false, true);
    if (v == nullptr || v->shape == Shape::Struct || v->shape == Shape::StructArray) {
        v = pickVar(ref.ty, true, true);
    }
    if (v == nullptr) {
        return {};
    }
    const std::string target = v->shape == Shape::Array ? v->name + "[" + index(*v, 2) + "]" : v->name;
    return ref.name + " := REF(" + target + ");\n";
}

std::string Gen::assignment(int depth) {
    if (c_.percent(4)) {
        for (const Var& v : scope_) {
            if (v.shape == Shape::Ref) {
                if (std::string s = refTo(v); !s.empty()) {
                    return s;
                }
            }
        }
    }
    if (c_.percent(5)) {
        if (std::string s = structCopy(); !s.empty()) {
            return s;
        }
    }
    Ty t = Ty::Dint;
    const std::string target = lvalue(t, 2);
    if (target.empty()) {
        return {};
    }
    return target + " := " + expr(t, depth) + ";\n";
}

std::string Gen::block(int count, int depth) {
    std::string out;
    for (int n = 0; n < count && budget_ > 0; ++n) {
        out += statement(depth);
    }
    return out;
}

std::string Gen::statement(int depth) {
    --budget_;
    const std::uint32_t kind = depth >= 3 ? 0 : c_.below(100);
    std::string s;
    if (kind < 50) {
        s = assignment(3);
    } else if (kind < 62) {
        s = ifStmt(depth);
    } else if (kind < 68) {
        s = caseStmt(depth);
    } else if (kind < 76) {
        s = forStmt(depth);
    } else if (kind < 81) {
        s = whileStmt(depth, false);
    } else if (kind < 86) {
        s = whileStmt(depth, true);
    } else if (kind < 94) {
        s = o_.calls ? fbCall(2) : assignment(3);
    } else if (loops_ > 0) {
        s = "IF " + condition(2) + " THEN " + (c_.below(2) != 0 ? "EXIT" : "CONTINUE") + "; END_IF;\n";
    }
    return s.empty() ? assignment(2) : s;
}

std::string Gen::ifStmt(int depth) {
    std::string s = "IF " + condition(3) + " THEN\n" + block(1 + static_cast<int>(c_.below(3)), depth + 1);
    for (std::uint32_t n = c_.below(3); n > 0; --n) {
        s += "ELSIF " + condition(2) + " THEN\n" + block(1 + static_cast<int>(c_.below(2)), depth + 1);
    }
    if (c_.percent(50)) {
        s += "ELSE\n" + block(1 + static_cast<int>(c_.below(2)), depth + 1);
    }
    return s + "END_IF;\n";
}

std::string Gen::caseStmt(int depth) {
    static constexpr std::array<Ty, 4> kSelectors{Ty::Dint, Ty::Int, Ty::Usint, Ty::Sint};
    const Ty sel = kSelectors[c_.below(kSelectors.size())];
    std::vector<int> labels(10);
    std::iota(labels.begin(), labels.end(), 0);
    std::string s = "CASE " + expr(sel, 2) + " OF\n";
    std::size_t next = 0;
    for (std::uint32_t arms = 1 + c_.below(3); arms > 0 && next < labels.size(); --arms) {
        const std::size_t take = std::min<std::size_t>(1 + c_.below(3), labels.size() - next);
        if (take > 1 && c_.percent(40)) {
            s += std::to_string(labels[next]) + ".." + std::to_string(labels[next + take - 1]);
        } else {
            for (std::size_t k = 0; k < take; ++k) {
                s += (k == 0 ? "" : ", ") + std::to_string(labels[next + k]);
            }
        }
        next += take + c_.below(2);
        s += ":\n" + block(1 + static_cast<int>(c_.below(2)), depth + 1);
    }
    if (c_.percent(50)) {
        s += "ELSE\n" + block(1, depth + 1);
    }
    return s + "END_CASE;\n";
}

std::string Gen::forStmt(int depth) {
    const std::string i = fresh("i");
    // DINT counters mostly; INT and LINT ones have their own loop instructions.
    const std::uint32_t kind = c_.below(10);
    const Ty t = kind < 6 ? Ty::Dint : kind < 8 ? Ty::Int : Ty::Lint;
    const std::string type = tyName(t);
    const auto bound = [&] {
        return c_.percent(50) ? type + "#" + std::to_string(static_cast<int>(c_.below(13)) - 4)
                              : "LIMIT(" + type + "#-4, " + expr(t, 2) + ", " + type + "#8)";
    };
    std::string s = "FOR " + i + " := " + bound() + " TO " + bound();
    const std::uint32_t step = c_.below(100);
    if (step < 30) {
        static constexpr std::array<int, 5> kSteps{2, 3, -1, -2, 1};
        s += " BY " + type + "#" + std::to_string(kSteps[c_.below(kSteps.size())]);
    } else if (step < 35) {
        // A step read from a variable: zero now and then, which faults.
        if (const Var* v = pickVar(t, true, false); v != nullptr) {
            s += " BY LIMIT(" + type + "#-2, " + v->name + ", " + type + "#2)";
        }
    }
    // The counter is readable (an index, an operand) but never assigned.
    scope_.push_back({i, t, Shape::Scalar, 0, 0, false});
    ++loops_;
    s += " DO\n" + block(1 + static_cast<int>(c_.below(3)), depth + 1) + "END_FOR;\n";
    --loops_;
    return s;
}

std::string Gen::whileStmt(int depth, bool repeat) {
    const std::string n = fresh(repeat ? "r" : "w");
    const std::string limit = std::to_string(1 + c_.below(5));
    scope_.push_back({n, Ty::Dint, Shape::Scalar, 0, 0, false});
    ++loops_;
    // The counter moves first, so a CONTINUE in the body cannot skip it.
    std::string body = n + " := " + n + " + 1;\n" + block(1 + static_cast<int>(c_.below(3)), depth + 1);
    --loops_;
    if (repeat) {
        return n + " := 0;\nREPEAT\n" + body + "UNTIL " + n + " >= " + limit + " OR " + condition(2) +
               "\nEND_REPEAT;\n";
    }
    return n + " := 0;\nWHILE " + n + " < " + limit + " AND " + condition(2) + " DO\n" + body + "END_WHILE;\n";
}

std::string Gen::fbCall(int depth) {
    std::vector<const Var*> instances;
    for (const Var& v : scope_) {
        if (v.shape == Shape::Instance) {
            instances.push_back(&v);
        }
    }
    if (instances.empty()) {
        return {};
    }
    const Var& inst = *instances[c_.below(static_cast<std::uint32_t>(instances.size()))];
    const Callable& fb = fbs_[static_cast<std::size_t>(inst.fb)];
    std::string args;
    const auto add = [&args](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
    for (const Field& in : fb.inputs) {
        if (!fb.standard || c_.percent(80)) {
            add(in.name + " := " + expr(in.ty, depth));
        }
    }
    for (const Field& io : fb.inOuts) {
        add(io.name + " := " + pickVar(io.ty, true, true)->name);
    }
    for (const Field& out : fb.outputs) {
        if (c_.percent(40)) {
            if (const Var* v = pickVar(out.ty, true, true); v != nullptr) {
                add(out.name + " => " + v->name);
            }
        }
    }
    return inst.name + "(" + args + ");\n";
}

Callable Gen::standardFb() {
    switch (c_.below(5)) {
    case 0: {
        static constexpr std::array<const char*, 3> kTimers{"TON", "TOF", "TP"};
        return {
            kTimers[c_.below(3)], Ty::Bool, {{"IN", Ty::Bool}, {"PT", Ty::Time}}, {{"Q", Ty::Bool}, {"ET", Ty::Time}}};
    }
    case 1: return {c_.below(2) != 0 ? "R_TRIG" : "F_TRIG", Ty::Bool, {{"CLK", Ty::Bool}}, {{"Q", Ty::Bool}}};
    case 2:
        return {"CTU",
                Ty::Bool,
                {{"CU", Ty::Bool}, {"RESET", Ty::Bool}, {"PV", Ty::Int}},
                {{"Q", Ty::Bool}, {"CV", Ty::Int}}};
    case 3:
        return {"CTD",
                Ty::Bool,
                {{"CD", Ty::Bool}, {"LOAD", Ty::Bool}, {"PV", Ty::Int}},
                {{"Q", Ty::Bool}, {"CV", Ty::Int}}};
    default: return {"SR", Ty::Bool, {{"SET1", Ty::Bool}, {"RESET", Ty::Bool}}, {{"Q1", Ty::Bool}}};
    }
}

std::string Gen::function(int k) {
    Callable f{"Fn" + std::to_string(k), anyType(false)};
    scope_.clear();
    for (std::uint32_t n = 1 + c_.below(3); n > 0; --n) {
        f.inputs.push_back({fresh("p"), anyType(true)});
        scope_.push_back({f.inputs.back().name, f.inputs.back().ty, Shape::Scalar, 0, 0, false});
    }
    const std::size_t locals = scope_.size();
    addVars(scope_, "l", 1 + static_cast<int>(c_.below(3)), false);
    callableFns_ = static_cast<std::size_t>(k);
    budget_ = 4;
    const std::string body = block(3, 1) + f.name + " := " + expr(f.result, 3) + ";\n";
    std::string s = "FUNCTION " + f.name + " : " + tyName(f.result) + "\nVAR_INPUT\n";
    for (const Field& in : f.inputs) {
        s += "  " + in.name + " : " + (in.ty == Ty::String ? "STRING[10]" : tyName(in.ty)) + ";\n";
    }
    s += "END_VAR\nVAR\n" + pouVars(scope_, locals) + "END_VAR\n" + body + "END_FUNCTION\n\n";
    fns_.push_back(f);
    return s;
}

std::string Gen::method(const Callable& m, const std::vector<Var>& fbScope) {
    scope_ = fbScope;
    for (const Field& in : m.inputs) {
        scope_.push_back({in.name, in.ty, Shape::Scalar, 0, 0, false});
    }
    const std::size_t locals = scope_.size();
    addVars(scope_, "m", static_cast<int>(c_.below(2)), false);
    budget_ = 4;
    const std::string body = block(2, 1) + m.name + " := " + expr(m.result, 3) + ";\n";
    std::string s = "METHOD " + m.name + " : " + tyName(m.result) + "\nVAR_INPUT\n";
    for (const Field& in : m.inputs) {
        s += "  " + in.name + " : " + (in.ty == Ty::String ? "STRING[10]" : tyName(in.ty)) + ";\n";
    }
    return s + "END_VAR\nVAR\n" + pouVars(scope_, locals) + "END_VAR\n" + body + "END_METHOD\n";
}

std::string Gen::functionBlock(int k) {
    Callable fb{"Fb" + std::to_string(k)};
    scope_ = globals_;
    const auto section = [&](std::vector<Field>& fields, const char* prefix, std::uint32_t most, bool writable) {
        for (std::uint32_t n = 1 + c_.below(most); n > 0; --n) {
            fields.push_back({fresh(prefix), anyType(true)});
            scope_.push_back({fields.back().name, fields.back().ty, Shape::Scalar, 0, 0, writable});
        }
    };
    section(fb.inputs, "in", 3, false);
    section(fb.outputs, "out", 2, true);
    if (c_.percent(60)) {
        section(fb.inOuts, "io", 1, true);
    }
    const std::size_t locals = scope_.size();
    addVars(scope_, "s", 1 + static_cast<int>(c_.below(3)), false);
    if (c_.percent(50)) {
        fbs_.push_back(standardFb());
        fbs_.back().standard = true;
        scope_.push_back({fresh("tm"), Ty::Bool, Shape::Instance, 0, 0, false, static_cast<int>(fbs_.size()) - 1});
    }
    callableFns_ = fns_.size();
    budget_ = 6;
    const std::string body = block(4, 1);
    const std::vector<Var> fbScope(scope_.begin(), scope_.end());
    std::string s = "FUNCTION_BLOCK " + fb.name + "\n";
    const auto declareSection = [&s](const char* kw, const std::vector<Field>& fields) {
        if (fields.empty()) {
            return;
        }
        s += std::string(kw) + "\n";
        for (const Field& f : fields) {
            s += "  " + f.name + " : " + (f.ty == Ty::String ? "STRING[10]" : tyName(f.ty)) + ";\n";
        }
        s += "END_VAR\n";
    };
    declareSection("VAR_INPUT", fb.inputs);
    declareSection("VAR_OUTPUT", fb.outputs);
    declareSection("VAR_IN_OUT", fb.inOuts);
    s += "VAR\n" + pouVars(scope_, locals) + "END_VAR\n" + body;
    if (c_.percent(50)) {
        // Methods see the FB's inputs, outputs and locals, not its VAR_IN_OUT (bound only in a call).
        std::vector<Var> methodScope;
        for (const Var& v : fbScope) {
            if (std::none_of(fb.inOuts.begin(), fb.inOuts.end(), [&v](const Field& f) { return f.name == v.name; })) {
                methodScope.push_back(v);
            }
        }
        Callable m{fresh("M"), anyType(false)};
        m.inputs.push_back({fresh("k"), anyType(true)});
        s += method(m, methodScope);
        fb.methods.push_back(m);
    }
    fbs_.push_back(fb);
    return s + "END_FUNCTION_BLOCK\n\n";
}

GeneratedProgram Gen::run() {
    GeneratedProgram out;
    out.overflowTrap = c_.percent(25);
    out.budget = c_.percent(15) ? 4 + c_.below(40) : 0;
    for (std::uint32_t n = 1 + c_.below(4); n > 0; --n) {
        fields_.push_back({fresh("f"), anyType(true)});
    }
    std::string text = "TYPE S0 : STRUCT\n";
    for (const Field& f : fields_) {
        text += "  " + f.name + " : " + (f.ty == Ty::String ? "STRING[10]" : tyName(f.ty)) + ";\n";
    }
    text += "END_STRUCT;\nEND_TYPE\n\n";
    addVars(globals_, "g", 1 + static_cast<int>(c_.below(3)), false);
    text += "VAR_GLOBAL\n" + pouVars(globals_, 0) + "END_VAR\n\n";
    if (o_.calls) {
        for (int k = 0, n = static_cast<int>(c_.below(3)); k < n; ++k) {
            text += function(k);
        }
        for (int k = 0, n = static_cast<int>(c_.below(3)); k < n; ++k) {
            text += functionBlock(k);
        }
    }
    scope_ = globals_;
    const std::size_t locals = scope_.size();
    addVars(scope_, "v", 2 + static_cast<int>(c_.below(4)), true);
    if (o_.calls) {
        for (std::size_t k = 0; k < fbs_.size(); ++k) {
            if (!fbs_[k].standard) {
                scope_.push_back({fresh("fb"), Ty::Bool, Shape::Instance, 0, 0, false, static_cast<int>(k)});
            }
        }
        for (std::uint32_t n = c_.below(3); n > 0; --n) {
            fbs_.push_back(standardFb());
            fbs_.back().standard = true;
            scope_.push_back({fresh("tm"), Ty::Bool, Shape::Instance, 0, 0, false, static_cast<int>(fbs_.size()) - 1});
        }
    }
    // A reference set at the start of every cycle, except now and then: dereferencing NULL faults.
    std::string body;
    if (c_.percent(60)) {
        Ty t = anyType(false);
        t = t == Ty::Bool ? Ty::Dint : t; // a BOOL target would make most reads a NULL fault
        scope_.push_back({fresh("rf"), t, Shape::Ref, 0, 0, false});
        if (c_.percent(90)) {
            body += refTo(scope_.back());
        }
    }
    callableFns_ = fns_.size();
    budget_ = o_.statements;
    body += block(o_.statements, 0);
    text += "PROGRAM p\nVAR\n" + pouVars(scope_, locals) + "END_VAR\n" + body + "END_PROGRAM\n\n" + kConfiguration;
    out.text = std::move(text);
    return out;
}

} // namespace gen
} // namespace takt::test
