// ASSERT_* on STRUCT and ARRAY values. ASSERT_EQUAL / ASSERT_NOT_EQUAL compare them by value,
// member by member, so both operands must have one type the comparison can walk; the ordering
// assertions have no meaning for them, which gets its own code rather than the generic "no
// signature accepts" of the standard-function resolution.
#include "sema/body.h"
#include "sema/stdlib.h"

namespace takt::compiler::sema {

namespace {

bool isAggregate(const Type* t) {
    const TypeKind k = stripAlias(t)->kind();
    return k == TypeKind::Array || k == TypeKind::Struct;
}

// FB and PROGRAM instances pass ANY too, but have no value to compare.
bool isInstance(const Type* t) {
    const TypeKind k = stripAlias(t)->kind();
    return k == TypeKind::FunctionBlock || k == TypeKind::Program;
}

std::string memberText(const std::string& path) {
    return path.empty() ? std::string("the value") : "member '" + path.substr(path[0] == '.' ? 1 : 0) + "'";
}

// One type for the comparison: aliases resolved at every level (ARRAY [1..3] OF MyInt and
// ARRAY [1..3] OF INT are the same when MyInt is INT).
bool sameType(const Type* a, const Type* b) {
    a = stripAlias(a);
    b = stripAlias(b);
    if (a == b) {
        return true;
    }
    if (a->kind() != TypeKind::Array || b->kind() != TypeKind::Array) {
        return false;
    }
    const auto* x = static_cast<const ArrayType*>(a);
    const auto* y = static_cast<const ArrayType*>(b);
    if (x->dims.size() != y->dims.size()) {
        return false;
    }
    for (std::size_t i = 0; i < x->dims.size(); ++i) {
        if (x->dims[i].lower != y->dims[i].lower || x->dims[i].upper != y->dims[i].upper) {
            return false;
        }
    }
    return sameType(x->element, y->element);
}

// Why values of `t` have no value equality (a member that is an FB instance, ARRAY [*]); empty
// when they have. `path` names the member for the message.
std::string withoutEquality(const Type* t, const std::string& path) {
    t = stripAlias(t);
    switch (t->kind()) {
    case TypeKind::FunctionBlock:
    case TypeKind::Program:
        return memberText(path) + " is an instance of '" + t->name() + "', which has no value equality";
    case TypeKind::Array: {
        const auto* a = static_cast<const ArrayType*>(t);
        if (a->dims.empty()) {
            return memberText(path) + " is an ARRAY [*], whose bounds are not known to the comparison";
        }
        return withoutEquality(a->element, path + "[]");
    }
    case TypeKind::Struct:
        for (const Field& f : static_cast<const StructType*>(t)->fields) {
            if (std::string why = withoutEquality(f.type, path + "." + f.name); !why.empty()) {
                return why;
            }
        }
        return {};
    default: return {};
    }
}

} // namespace

bool BodyChecker::checkAssertOperands(const ast::CallExpr& e, const StdFunction& f, const std::vector<StdArg>& args) {
    const StdOp op = standardSignatures()[f.first].op;
    if (op == StdOp::AssertTrue || op == StdOp::AssertFalse) {
        return true;
    }
    // The compared values come first (a trailing MESSAGE is a string, never an aggregate).
    const std::size_t values = op == StdOp::AssertNear ? 3 : 2;
    const Type* aggregate = nullptr;
    for (std::size_t i = 0; i < values && i < args.size(); ++i) {
        if (!isError(args[i].type) && (isAggregate(args[i].type) || isInstance(args[i].type))) {
            aggregate = args[i].type;
            break;
        }
    }
    if (aggregate == nullptr) {
        return true;
    }
    const std::string kind = stripAlias(aggregate)->kind() == TypeKind::Struct ? "STRUCT" : "ARRAY";
    if (op != StdOp::AssertEqual && op != StdOp::AssertNotEqual) {
        if (!isAggregate(aggregate)) {
            return true; // an FB instance is no ANY_ELEMENTARY: the resolution reports it
        }
        cx_.error(DiagCode::AssertOrderOnAggregate, e.span,
                  "'" + f.name + "' needs an ordering, which is not defined for " + kind + " values ('" +
                      typeName(aggregate) + "'); compare a member or element, or use ASSERT_EQUAL / ASSERT_NOT_EQUAL");
        return false;
    }
    if (args.size() < 2 || isError(args[0].type) || isError(args[1].type)) {
        return true; // the resolution reports the missing or broken operand
    }
    if (!sameType(args[0].type, args[1].type)) {
        cx_.error(DiagCode::AssertOperandTypes, e.span,
                  "'" + f.name + "' compares two values of one type, but they are '" + typeName(args[0].type) +
                      "' and '" + typeName(args[1].type) + "'");
        return false;
    }
    if (isInstance(aggregate)) {
        cx_.error(DiagCode::AssertOperandTypes, e.span,
                  "'" + f.name + "' cannot compare function block instances ('" + typeName(aggregate) +
                      "'): they have no value equality; compare their outputs");
        return false;
    }
    if (const std::string why = withoutEquality(aggregate, ""); !why.empty()) {
        cx_.error(DiagCode::AssertOperandTypes, e.span,
                  "'" + f.name + "' cannot compare '" + typeName(aggregate) + "' values: " + why);
        return false;
    }
    return true;
}

} // namespace takt::compiler::sema
