// The standard function blocks with the semantics LANGUAGE.md pins ("Pinned semantics"). Each
// reads and writes its instance through the layout resolved at load, so the members are where
// semantic analysis declared them, and the widths of PV/CV follow the typed variants.
#include "vm_internal.h"

#include <algorithm>
#include <limits>

namespace takt::vm {

namespace {

using bytecode::Native;

std::int64_t elapsed(const NativeContext& ctx, std::int64_t start, std::int64_t pt) noexcept {
    // Subtraction through unsigned: a clock far from the start must not overflow.
    const auto diff =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(ctx.nowNs) - static_cast<std::uint64_t>(start));
    return std::clamp<std::int64_t>(diff, 0, std::max<std::int64_t>(pt, 0));
}

// TON: on the rising cycle ET = 0 and start = now; then ET = MIN(now - start, PT), Q = ET >= PT;
// IN FALSE resets Q and ET.
void ton(const NativeContext& ctx, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const bool input = readBool(in, f[kIn]);
    const std::int64_t pt = readInt(in, f[kPt]);
    if (!input) {
        writeBool(in, f[kQ], false);
        writeInt(in, f[kEt], 0);
        writeBool(in, f[kRunning], false);
    } else {
        std::int64_t et = 0;
        if (!readBool(in, f[kRunning])) {
            writeInt(in, f[kStartTime], ctx.nowNs);
            writeBool(in, f[kRunning], true);
        } else {
            et = elapsed(ctx, readInt(in, f[kStartTime]), pt);
        }
        writeInt(in, f[kEt], et);
        writeBool(in, f[kQ], et >= pt);
    }
    writeBool(in, f[kPrevIn], input);
}

// TOF: IN TRUE gives Q TRUE, ET 0. The falling edge starts the delay; then ET = MIN(now - start,
// PT), Q = ET < PT; ET stays PT until IN rises again.
void tof(const NativeContext& ctx, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const bool input = readBool(in, f[kIn]);
    const std::int64_t pt = readInt(in, f[kPt]);
    if (input) {
        writeBool(in, f[kQ], true);
        writeInt(in, f[kEt], 0);
        writeBool(in, f[kRunning], false);
    } else {
        if (readBool(in, f[kPrevIn])) {
            writeInt(in, f[kStartTime], ctx.nowNs);
            writeBool(in, f[kRunning], true);
        }
        if (readBool(in, f[kRunning])) {
            const std::int64_t et = elapsed(ctx, readInt(in, f[kStartTime]), pt);
            writeInt(in, f[kEt], et);
            writeBool(in, f[kQ], et < pt);
            if (et >= pt) {
                writeBool(in, f[kRunning], false);
            }
        }
    }
    writeBool(in, f[kPrevIn], input);
}

// TP: a rising IN while not pulsing starts a pulse (Q TRUE, ET 0, start = now); edges during a
// pulse are ignored; at ET >= PT, Q FALSE and ET = PT while IN stays TRUE, ET = 0 once IN is FALSE.
void tp(const NativeContext& ctx, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const bool input = readBool(in, f[kIn]);
    const bool rising = input && !readBool(in, f[kPrevIn]);
    const std::int64_t pt = readInt(in, f[kPt]);
    bool running = readBool(in, f[kRunning]);
    if (!running && rising) {
        writeInt(in, f[kStartTime], ctx.nowNs);
        running = true;
    }
    if (running) {
        const std::int64_t et = elapsed(ctx, readInt(in, f[kStartTime]), pt);
        if (et >= pt) {
            running = false;
            writeBool(in, f[kQ], false);
            writeInt(in, f[kEt], input ? pt : 0);
        } else {
            writeBool(in, f[kQ], true);
            writeInt(in, f[kEt], et);
        }
    } else {
        writeBool(in, f[kQ], false);
        if (!input) {
            writeInt(in, f[kEt], 0);
        }
    }
    writeBool(in, f[kRunning], running);
    writeBool(in, f[kPrevIn], input);
}

void rTrig(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const bool clk = readBool(in, l.fields[kClk]);
    writeBool(in, l.fields[kQ], clk && !readBool(in, l.fields[kM]));
    writeBool(in, l.fields[kM], clk);
}

// M starts FALSE, so Q is TRUE on the first call with CLK FALSE.
void fTrig(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const bool clk = readBool(in, l.fields[kClk]);
    writeBool(in, l.fields[kQ], !clk && !readBool(in, l.fields[kM]));
    writeBool(in, l.fields[kM], !clk);
}

// Counter arithmetic in the width and signedness of CV (INT, DINT, LINT, UDINT, ULINT …).
struct Counter {
    FbField cv;
    FbField pv;

    [[nodiscard]] bool less(std::int64_t a, std::int64_t b) const noexcept {
        return cv.isSigned ? a < b : static_cast<std::uint64_t>(a) < static_cast<std::uint64_t>(b);
    }
    [[nodiscard]] std::int64_t maxValue() const noexcept {
        const unsigned bits = cv.size * 8u;
        if (cv.isSigned) {
            return static_cast<std::int64_t>((std::uint64_t{1} << (bits - 1)) - 1);
        }
        return bits == 64 ? static_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max())
                          : static_cast<std::int64_t>((std::uint64_t{1} << bits) - 1);
    }
    [[nodiscard]] std::int64_t minValue() const noexcept { return cv.isSigned ? -maxValue() - 1 : 0; }
    [[nodiscard]] bool atLeastPv(const std::uint8_t* in) const noexcept {
        return !less(readInt(in, cv), readInt(in, pv));
    }
    [[nodiscard]] bool atMostZero(const std::uint8_t* in) const noexcept {
        const std::int64_t v = readInt(in, cv);
        return cv.isSigned ? v <= 0 : v == 0;
    }
    void up(std::uint8_t* in) const noexcept {
        const std::int64_t v = readInt(in, cv);
        if (less(v, maxValue())) {
            writeInt(in, cv, static_cast<std::int64_t>(static_cast<std::uint64_t>(v) + 1));
        }
    }
    void down(std::uint8_t* in) const noexcept {
        const std::int64_t v = readInt(in, cv);
        if (less(minValue(), v)) {
            writeInt(in, cv, static_cast<std::int64_t>(static_cast<std::uint64_t>(v) - 1));
        }
    }
};

bool edge(std::uint8_t* in, const FbField& input, const FbField& memory) noexcept {
    const bool now = readBool(in, input);
    const bool rising = now && !readBool(in, memory);
    writeBool(in, memory, now);
    return rising;
}

void ctu(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const Counter c{f[kCv], f[kPv]};
    const bool cu = edge(in, f[kCu], f[kCuM]);
    if (readBool(in, f[kR])) {
        writeInt(in, f[kCv], 0);
    } else if (cu) {
        c.up(in);
    }
    writeBool(in, f[kQ], c.atLeastPv(in));
}

void ctd(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const Counter c{f[kCv], f[kPv]};
    const bool cd = edge(in, f[kCd], f[kCdM]);
    if (readBool(in, f[kLd])) {
        writeInt(in, f[kCv], readInt(in, f[kPv]));
    } else if (cd) {
        c.down(in);
    }
    writeBool(in, f[kQ], c.atMostZero(in));
}

// Both edges in one call cancel out (IEC 61131-3 CTUD).
void ctud(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const Counter c{f[kCv], f[kPv]};
    const bool cu = edge(in, f[kCu], f[kCuM]);
    const bool cd = edge(in, f[kCd], f[kCdM]);
    if (readBool(in, f[kR])) {
        writeInt(in, f[kCv], 0);
    } else if (readBool(in, f[kLd])) {
        writeInt(in, f[kCv], readInt(in, f[kPv]));
    } else if (cu && !cd) {
        c.up(in);
    } else if (cd && !cu) {
        c.down(in);
    }
    writeBool(in, f[kQu], c.atLeastPv(in));
    writeBool(in, f[kQd], c.atMostZero(in));
}

void sr(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    writeBool(in, f[kQ1], readBool(in, f[kS1]) || (!readBool(in, f[kR]) && readBool(in, f[kQ1])));
}

void rs(const NativeContext&, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    writeBool(in, f[kQ1], !readBool(in, f[kR1]) && (readBool(in, f[kS]) || readBool(in, f[kQ1])));
}

// RTC as OpenPLC defines it: Q copies IN. IN FALSE: CDT is the date and time now. On the rising
// edge of IN the offset PDT - now is kept, and while IN stays TRUE CDT = now + offset, a clock
// running on from PDT. Through unsigned: any DT values wrap rather than overflow.
void rtc(const NativeContext& ctx, std::uint8_t* in, const FbLayout& l) noexcept {
    const auto& f = l.fields;
    const bool input = readBool(in, f[kIn]);
    const auto now = static_cast<std::uint64_t>(ctx.wallNs);
    if (input && !readBool(in, f[kPrevIn])) {
        writeInt(in, f[kOffset], static_cast<std::int64_t>(static_cast<std::uint64_t>(readInt(in, f[kPdt])) - now));
    }
    const std::uint64_t offset = input ? static_cast<std::uint64_t>(readInt(in, f[kOffset])) : 0;
    writeInt(in, f[kCdt], static_cast<std::int64_t>(now + offset));
    writeBool(in, f[kQ], input);
    writeBool(in, f[kPrevIn], input);
}

} // namespace

NativeFb nativeFb(Native n) noexcept {
    switch (n) {
    case Native::Ton: return ton;
    case Native::Tof: return tof;
    case Native::Tp: return tp;
    case Native::RTrig: return rTrig;
    case Native::FTrig: return fTrig;
    case Native::Ctu: return ctu;
    case Native::Ctd: return ctd;
    case Native::Ctud: return ctud;
    case Native::Sr: return sr;
    case Native::Rs: return rs;
    case Native::Rtc: return rtc;
    default: return nullptr;
    }
}

// Each standard FB under a C name from natives.def (takt_fb_Ton, takt_fb_RTrig …): the native
// tier links this file's LLVM bitcode and finds an FB by that name, to compile a copy of it for
// each instance layout (the layout a constant, so LLVM folds the member offsets).
extern "C" {
#define TAKT_NATIVE_Fb(name)                                                                                           \
    void takt_fb_##name(const NativeContext& ctx, std::uint8_t* in, const FbLayout& l) noexcept {                      \
        nativeFb(Native::name)(ctx, in, l);                                                                            \
    }
#define TAKT_NATIVE_Fn(name)
#define TAKT_NATIVE(name, kind, signature) TAKT_NATIVE_##kind(name)
#include "takt/bytecode/natives.def"
#undef TAKT_NATIVE
#undef TAKT_NATIVE_Fn
#undef TAKT_NATIVE_Fb
}

} // namespace takt::vm
