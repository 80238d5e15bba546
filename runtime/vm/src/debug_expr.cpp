// The debugger's expressions (debug_expr.h): a stack machine over 64-bit slots, run on whichever
// thread asks (a scan thread for a breakpoint's condition), so nothing here allocates or throws.
#include "takt/vm/debug_expr.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "takt/bytecode/value_kind.h"

namespace takt::vm {

using bytecode::ValueKind;

const char* exprStatusText(ExprStatus s) noexcept {
    switch (s) {
    case ExprStatus::Ok: return "ok";
    case ExprStatus::DivisionByZero: return "division by zero";
    case ExprStatus::IndexOutOfRange: return "array index out of range";
    case ExprStatus::OutsideImage: return "address outside the data image";
    case ExprStatus::Invalid: return "invalid expression code";
    }
    return "invalid expression code";
}

bool isRealKind(ValueKind k) noexcept {
    return k == ValueKind::Real || k == ValueKind::LReal;
}

namespace {

// An integer wrapped to the width of `k` and extended back to 64 bits, as the VM's narrow
// integer operations leave it; a REAL rounded to single precision.
ExprSlot normalize(ValueKind k, ExprSlot v) noexcept {
    if (isRealKind(k)) {
        if (k == ValueKind::Real) {
            v.d = static_cast<double>(static_cast<float>(v.d));
        }
        return v;
    }
    if (k == ValueKind::Bool) {
        v.u = v.u != 0 ? 1 : 0;
        return v;
    }
    const std::uint32_t bits = bytecode::elementaryWidth(k) * 8;
    if (bits == 0 || bits >= 64) {
        return v;
    }
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    v.u &= mask;
    if (bytecode::isSignedKind(k) && (v.u >> (bits - 1)) != 0) {
        v.u |= ~mask;
    }
    return v;
}

ExprSlot load(ValueKind k, const std::uint8_t* p, std::uint32_t bit) noexcept {
    ExprSlot v{0};
    if (isRealKind(k)) {
        if (k == ValueKind::Real) {
            float f = 0;
            std::memcpy(&f, p, 4);
            v.d = f;
        } else {
            std::memcpy(&v.d, p, 8);
        }
        return v;
    }
    if (k == ValueKind::Bool) {
        v.u = (p[0] >> bit) & 1U;
        return v;
    }
    std::memcpy(&v.u, p, bytecode::elementaryWidth(k)); // little-endian, as the image is
    return normalize(k, v);
}

ExprSlot convert(ValueKind from, ValueKind to, ExprSlot v) noexcept {
    if (isRealKind(from) == isRealKind(to)) {
        return normalize(to, v);
    }
    ExprSlot r{0};
    if (isRealKind(to)) {
        r.d = bytecode::isSignedKind(from) ? static_cast<double>(v.i) : static_cast<double>(v.u);
        return normalize(to, r);
    }
    // REAL to an integer rounds to nearest, as REAL_TO_INT does; out of range saturates.
    const double d = std::nearbyint(v.d);
    if (std::isnan(d)) {
        return r;
    }
    if (bytecode::isSignedKind(to)) {
        r.i = d <= -9.2233720368547758e18  ? std::numeric_limits<std::int64_t>::min()
              : d >= 9.2233720368547758e18 ? std::numeric_limits<std::int64_t>::max()
                                           : static_cast<std::int64_t>(d);
    } else {
        r.u = d <= 0                       ? 0
              : d >= 1.8446744073709552e19 ? std::numeric_limits<std::uint64_t>::max()
                                           : static_cast<std::uint64_t>(d);
    }
    return normalize(to, r);
}

bool compare(ExprOp op, ValueKind k, ExprSlot a, ExprSlot b) noexcept {
    int c = 0;
    if (isRealKind(k)) {
        if (std::isnan(a.d) || std::isnan(b.d)) {
            return op == ExprOp::Ne;
        }
        c = a.d < b.d ? -1 : a.d > b.d ? 1 : 0;
    } else if (bytecode::isSignedKind(k)) {
        c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    } else {
        c = a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
    }
    switch (op) {
    case ExprOp::Eq: return c == 0;
    case ExprOp::Ne: return c != 0;
    case ExprOp::Lt: return c < 0;
    case ExprOp::Le: return c <= 0;
    case ExprOp::Gt: return c > 0;
    default: return c >= 0;
    }
}

// a op b in kind k; false on a division by zero.
bool arithmetic(ExprOp op, ValueKind k, ExprSlot a, ExprSlot b, ExprSlot& r) noexcept {
    if (isRealKind(k)) {
        switch (op) {
        case ExprOp::Add: r.d = a.d + b.d; break;
        case ExprOp::Sub: r.d = a.d - b.d; break;
        case ExprOp::Mul: r.d = a.d * b.d; break;
        case ExprOp::Div: r.d = a.d / b.d; break; // IEEE: ±inf or NaN, as the VM's REAL division
        case ExprOp::Pow: r.d = std::pow(a.d, b.d); break;
        default: return false;
        }
        r = normalize(k, r);
        return true;
    }
    // Integers: unsigned arithmetic wraps without undefined behaviour; the width is cut after.
    switch (op) {
    case ExprOp::Add: r.u = a.u + b.u; break;
    case ExprOp::Sub: r.u = a.u - b.u; break;
    case ExprOp::Mul: r.u = a.u * b.u; break;
    case ExprOp::And: r.u = a.u & b.u; break;
    case ExprOp::Or: r.u = a.u | b.u; break;
    case ExprOp::Xor: r.u = a.u ^ b.u; break;
    case ExprOp::Div:
    case ExprOp::Mod:
        if (b.u == 0) {
            return false;
        }
        if (bytecode::isSignedKind(k)) {
            if (a.i == std::numeric_limits<std::int64_t>::min() && b.i == -1) {
                r.u = op == ExprOp::Div ? a.u : 0;
            } else {
                r.i = op == ExprOp::Div ? a.i / b.i : a.i % b.i; // truncating toward zero, as IEC
            }
        } else {
            r.u = op == ExprOp::Div ? a.u / b.u : a.u % b.u;
        }
        break;
    default: return false;
    }
    r = normalize(k, r);
    return true;
}

} // namespace

void storeSlot(ValueKind k, ExprSlot v, std::uint8_t* to) noexcept {
    if (k == ValueKind::Real) {
        const auto f = static_cast<float>(v.d);
        std::memcpy(to, &f, 4);
    } else if (k == ValueKind::LReal) {
        std::memcpy(to, &v.d, 8);
    } else {
        std::memcpy(to, &v.u, bytecode::elementaryWidth(k));
    }
}

ExprStatus eval(const DebugExpr& e, const ExprScope& at, ExprSlot& out) noexcept {
    const std::uint8_t* data = at.image;
    const std::uint32_t size = at.imageSize;
    std::array<ExprSlot, kMaxExprDepth> stack{};
    std::uint32_t sp = 0;
    for (const ExprInstr& in : e.code) {
        // The compiler counted the depth; a code list that disagrees is refused, never overrun.
        const bool pushes = in.op == ExprOp::Const || in.op == ExprOp::AddrThis || in.op == ExprOp::AddrFrame ||
                            in.op == ExprOp::AddrAbs;
        const bool unary = in.op == ExprOp::AddrField || in.op == ExprOp::Deref || in.op == ExprOp::Load ||
                           in.op == ExprOp::Convert || in.op == ExprOp::Neg || in.op == ExprOp::Not;
        if ((pushes && sp == kMaxExprDepth) || (unary && sp < 1) || (!pushes && !unary && sp < 2)) {
            return ExprStatus::Invalid;
        }
        switch (in.op) {
        case ExprOp::Const: stack[sp++] = in.imm; break;
        case ExprOp::AddrThis: stack[sp++].u = std::uint64_t{at.thisOffset} + in.a; break;
        case ExprOp::AddrFrame: stack[sp++].u = std::uint64_t{at.frameOffset} + in.a; break;
        case ExprOp::AddrAbs: stack[sp++].u = in.a; break;
        case ExprOp::Deref: {
            // The slot is 8 bytes; the code writes and reads the offset in its low 4 (the image
            // is little-endian, as the host), and the high 4 may hold what the stack held before.
            const std::uint64_t slot = stack[sp - 1].u;
            if (slot > size || size - slot < 4) {
                return ExprStatus::OutsideImage;
            }
            std::uint32_t referent = 0;
            std::memcpy(&referent, data + slot, 4);
            if (referent == 0) {
                return ExprStatus::OutsideImage; // a slot no call has bound yet
            }
            stack[sp - 1].u = referent;
            break;
        }
        case ExprOp::AddrField: stack[sp - 1].u += in.a; break;
        case ExprOp::AddrIndex: {
            const ExprSlot index = stack[--sp];
            if (index.i < in.lo || index.i > in.hi) {
                return ExprStatus::IndexOutOfRange;
            }
            stack[sp - 1].u += static_cast<std::uint64_t>(index.i - in.lo) * in.a;
            break;
        }
        case ExprOp::Load: {
            const std::uint64_t from = stack[sp - 1].u;
            const std::uint32_t width = bytecode::elementaryWidth(in.kind);
            if (width == 0 || from > size || size - from < width) {
                return ExprStatus::OutsideImage;
            }
            stack[sp - 1] = load(in.kind, data + from, in.a);
            break;
        }
        case ExprOp::Convert: stack[sp - 1] = convert(in.from, in.kind, stack[sp - 1]); break;
        case ExprOp::Neg: {
            ExprSlot& v = stack[sp - 1];
            if (isRealKind(in.kind)) {
                v.d = -v.d;
            } else {
                v.u = 0 - v.u;
            }
            v = normalize(in.kind, v);
            break;
        }
        case ExprOp::Not:
            stack[sp - 1].u = in.kind == ValueKind::Bool ? (stack[sp - 1].u == 0 ? 1 : 0) : ~stack[sp - 1].u;
            stack[sp - 1] = normalize(in.kind, stack[sp - 1]);
            break;
        case ExprOp::Eq:
        case ExprOp::Ne:
        case ExprOp::Lt:
        case ExprOp::Le:
        case ExprOp::Gt:
        case ExprOp::Ge: {
            const ExprSlot b = stack[--sp];
            stack[sp - 1].u = compare(in.op, in.kind, stack[sp - 1], b) ? 1 : 0;
            break;
        }
        default: {
            const ExprSlot b = stack[--sp];
            ExprSlot r{0};
            if (!arithmetic(in.op, in.kind, stack[sp - 1], b, r)) {
                return in.op == ExprOp::Div || in.op == ExprOp::Mod ? ExprStatus::DivisionByZero : ExprStatus::Invalid;
            }
            stack[sp - 1] = r;
            break;
        }
        }
    }
    if (sp != 1) {
        return ExprStatus::Invalid;
    }
    out = stack[0];
    return ExprStatus::Ok;
}

} // namespace takt::vm
