#pragma once
// The generator's state, shared by its two halves: st_gen.cpp (declarations, POUs, statements)
// and st_gen_expr.cpp (typed expressions).
#include <string>
#include <vector>

#include "st_gen.h"

namespace takt::test::gen {

enum class Ty : std::uint8_t {
    Bool,
    Sint,
    Int,
    Dint,
    Lint,
    Usint,
    Uint,
    Udint,
    Ulint,
    Byte,
    Word,
    Dword,
    Lword,
    Real,
    Lreal,
    Time,
    String
};
inline constexpr int kTypeCount = 17;
enum class Kind : std::uint8_t { Bool, Signed, Unsigned, Bits, Real, Time, String };

const char* tyName(Ty t);
Kind kindOf(Ty t);
int bitsOf(Ty t);
inline bool isInteger(Ty t) {
    return kindOf(t) == Kind::Signed || kindOf(t) == Kind::Unsigned;
}
inline bool isNumeric(Ty t) {
    return isInteger(t) || kindOf(t) == Kind::Bits || kindOf(t) == Kind::Real;
}

enum class Shape : std::uint8_t { Scalar, Array, Struct, StructArray, Instance, Ref };

struct Field {
    std::string name;
    Ty ty;
};

struct Var {
    std::string name;
    Ty ty = Ty::Dint; // element type of an array
    Shape shape = Shape::Scalar;
    int lo = 0; // array bounds
    int hi = 0;
    bool writable = true;
    int fb = -1; // Instance: index into Gen::fbs_
};

// A FUNCTION, METHOD or the interface of a FUNCTION_BLOCK.
struct Callable {
    std::string name;
    Ty result = Ty::Dint;
    std::vector<Field> inputs{};
    std::vector<Field> outputs{};
    std::vector<Field> inOuts{};
    std::vector<Callable> methods{};
    bool standard = false; // TON, R_TRIG, CTU ...: inputs need not all be given
};

class Gen {
public:
    Gen(Choices& c, const GenOptions& o) : c_(c), o_(o) {}
    GeneratedProgram run();

    // st_gen_expr.cpp
    std::string expr(Ty t, int depth);
    std::string literal(Ty t);
    std::string condition(int depth) { return expr(Ty::Bool, depth); }
    std::string index(const Var& v, int depth);

private:
    std::string leaf(Ty t);
    std::string reads(Ty t);
    std::string integerExpr(Ty t, int depth);
    std::string bitsExpr(Ty t, int depth);
    std::string realExpr(Ty t, int depth);
    std::string timeExpr(Ty t, int depth);
    std::string boolExpr(int depth);
    std::string stringExpr(int depth);
    std::string common(Ty t, int depth, bool& done);
    std::string conversionTo(Ty t, int depth);
    std::string divisor(Ty t, int depth);
    std::string callReturning(Ty t, int depth);
    std::string arguments(const Callable& f, int depth, bool positional);
    const Var* pickVar(Ty t, bool scalarOnly, bool writableOnly);

    // st_gen.cpp
    Ty anyType(bool allowString);
    std::string fresh(const char* prefix);
    std::string declare(const Var& v);
    void addVars(std::vector<Var>& out, const char* prefix, int count, bool allTypes);
    std::string block(int count, int depth);
    std::string statement(int depth);
    std::string assignment(int depth);
    std::string structCopy();
    std::string refTo(const Var& ref);
    const Var* pickRef(Ty t);
    std::string ifStmt(int depth);
    std::string caseStmt(int depth);
    std::string forStmt(int depth);
    std::string whileStmt(int depth, bool repeat);
    std::string fbCall(int depth);
    std::string lvalue(Ty& t, int depth);
    std::string function(int k);
    std::string functionBlock(int k);
    std::string method(const Callable& m, const std::vector<Var>& fbScope);
    std::string pouVars(const std::vector<Var>& vars, std::size_t from);
    Callable standardFb();

    Choices& c_;
    const GenOptions& o_;
    std::vector<Field> fields_; // of the STRUCT type S0
    std::vector<Callable> fns_; // FUNCTIONs: a body calls only those before it
    std::vector<Callable> fbs_; // FUNCTION_BLOCK types, user and standard
    std::vector<Var> globals_;
    std::vector<Var> scope_;      // what the POU being generated sees
    std::size_t callableFns_ = 0; // fns_[0 .. callableFns_) may be called here
    int loops_ = 0;               // enclosing loops (EXIT and CONTINUE)
    int budget_ = 0;              // statements left for the POU
    int names_ = 0;
};

} // namespace takt::test::gen
