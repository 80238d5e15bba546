// The standard function blocks (LANGUAGE.md "Standard FBs"): their interfaces as ST, parsed as
// an extra unit named "<stdlib>" so that instances, member access and calls are checked like
// any user FB. The timers, edges, counters, bistables and RTC have empty bodies here: the VM
// implements them natively with the pinned semantics written in the comments (LANGUAGE.md,
// "Pinned semantics"). OpenPLC's library blocks (kOpenPlcFbs) are written in ST and compiled
// like user FBs.
#include "sema/context.h"

namespace takt::compiler::sema {

namespace {

constexpr std::string_view kStandardFbs = R"ST(
(* An SFC step (sfc.h): X active, T how long it has been active (kept when it is left). The rest is the chart's bookkeeping. *)
TYPE SFC_STEP :
STRUCT
    X : BOOL;
    T : TIME;
    _start : TIME;
    _entered : BOOL;
    _enter : BOOL;
    _leave : BOOL;
    _left : BOOL;
END_STRUCT;
END_TYPE

(* On-delay: on the cycle where IN rises, ET = 0 and the start time is now; then ET = MIN(now - start, PT) and Q = (ET >= PT); IN FALSE resets Q and ET. *)
FUNCTION_BLOCK TON
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* On-delay: on the cycle where IN rises, ET = 0 and the start time is now; then ET = MIN(now - start, PT) and Q = (ET >= PT); IN FALSE resets Q and ET. LTIME variant. *)
FUNCTION_BLOCK LTON
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Off-delay: IN TRUE gives Q TRUE and ET 0. On the falling edge of IN the start time is now; then ET = MIN(now - start, PT) and Q = (ET < PT); ET stays PT until IN rises again. *)
FUNCTION_BLOCK TOF
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Off-delay: IN TRUE gives Q TRUE and ET 0. On the falling edge of IN the start time is now; then ET = MIN(now - start, PT) and Q = (ET < PT); ET stays PT until IN rises again. LTIME variant. *)
FUNCTION_BLOCK LTOF
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Pulse: a rising IN while not pulsing starts a pulse (Q TRUE, ET 0, start = now); rising edges during a pulse are ignored; at ET >= PT, Q is FALSE and ET = PT while IN stays TRUE, ET = 0 once IN is FALSE. *)
FUNCTION_BLOCK TP
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Pulse: a rising IN while not pulsing starts a pulse (Q TRUE, ET 0, start = now); rising edges during a pulse are ignored; at ET >= PT, Q is FALSE and ET = PT while IN stays TRUE, ET = 0 once IN is FALSE. LTIME variant. *)
FUNCTION_BLOCK LTP
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* The IEC 61131-3 Ed.3 spellings of the timers; identical to TON/TOF/TP and LTON/LTOF/LTP. *)
FUNCTION_BLOCK TON_TIME
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

FUNCTION_BLOCK TOF_TIME
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

FUNCTION_BLOCK TP_TIME
VAR_INPUT
    IN : BOOL;
    PT : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : TIME;
END_VAR
VAR
    StartTime : TIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

FUNCTION_BLOCK TON_LTIME
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

FUNCTION_BLOCK TOF_LTIME
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK

FUNCTION_BLOCK TP_LTIME
VAR_INPUT
    IN : BOOL;
    PT : LTIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    ET : LTIME;
END_VAR
VAR
    StartTime : LTIME;
    Running : BOOL;
    PrevIn : BOOL;
END_VAR
END_FUNCTION_BLOCK


(* Real-time clock, as OpenPLC defines it: Q = IN. IN FALSE: CDT = the date and time now (the wall clock at the cycle's start). On the rising edge of IN, Offset = PDT - now; while IN stays TRUE, CDT = now + Offset, a clock running on from PDT. *)
FUNCTION_BLOCK RTC
VAR_INPUT
    IN : BOOL;
    PDT : DT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CDT : DT;
END_VAR
VAR
    PrevIn : BOOL;
    Offset : LTIME;
END_VAR
END_FUNCTION_BLOCK

(* Rising edge: Q = CLK AND NOT M; M := CLK. M starts FALSE. *)
FUNCTION_BLOCK R_TRIG
VAR_INPUT
    CLK : BOOL;
END_VAR
VAR_OUTPUT
    Q : BOOL;
END_VAR
VAR
    M : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Falling edge: Q = NOT CLK AND NOT M; M := NOT CLK. M starts FALSE, so Q is TRUE on the
   first call with CLK FALSE. *)
FUNCTION_BLOCK F_TRIG
VAR_INPUT
    CLK : BOOL;
END_VAR
VAR_OUTPUT
    Q : BOOL;
END_VAR
VAR
    M : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : INT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : INT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : INT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU_INT
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : INT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD_INT
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : INT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD_INT
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : INT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : INT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU_DINT
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : DINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : DINT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD_DINT
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : DINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : DINT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD_DINT
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : DINT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : DINT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU_LINT
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : LINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : LINT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD_LINT
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : LINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : LINT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD_LINT
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : LINT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : LINT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU_UDINT
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : UDINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : UDINT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD_UDINT
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : UDINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : UDINT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD_UDINT
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : UDINT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : UDINT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up counter: R resets CV to 0 and takes precedence; otherwise a rising CU increments CV
   (not beyond the type's maximum); Q = (CV >= PV). *)
FUNCTION_BLOCK CTU_ULINT
VAR_INPUT
    CU : BOOL;
    R : BOOL;
    PV : ULINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : ULINT;
END_VAR
VAR
    CU_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Down counter: LD loads CV := PV and takes precedence; otherwise a rising CD decrements CV
   (not below the type's minimum); Q = (CV <= 0). *)
FUNCTION_BLOCK CTD_ULINT
VAR_INPUT
    CD : BOOL;
    LD : BOOL;
    PV : ULINT;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    CV : ULINT;
END_VAR
VAR
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Up/down counter: R (CV := 0) takes precedence over LD (CV := PV), both over counting;
   a rising CU increments, a rising CD decrements; QU = (CV >= PV), QD = (CV <= 0). *)
FUNCTION_BLOCK CTUD_ULINT
VAR_INPUT
    CU : BOOL;
    CD : BOOL;
    R : BOOL;
    LD : BOOL;
    PV : ULINT;
END_VAR
VAR_OUTPUT
    QU : BOOL;
    QD : BOOL;
    CV : ULINT;
END_VAR
VAR
    CU_T : R_TRIG;
    CD_T : R_TRIG;
END_VAR
END_FUNCTION_BLOCK

(* Set-dominant bistable: Q1 := S1 OR (NOT R AND Q1). *)
FUNCTION_BLOCK SR
VAR_INPUT
    S1 : BOOL;
    R : BOOL;
END_VAR
VAR_OUTPUT
    Q1 : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Reset-dominant bistable: Q1 := NOT R1 AND (S OR Q1). *)
FUNCTION_BLOCK RS
VAR_INPUT
    S : BOOL;
    R1 : BOOL;
END_VAR
VAR_OUTPUT
    Q1 : BOOL;
END_VAR
END_FUNCTION_BLOCK
)ST";

// The blocks OpenPLC's editor offers beside the IEC ones (matiec's library, from IEC 61131-3
// edition 2's annex F), which OpenPLC programs use without declaring them. As in matiec a TIME
// counts in seconds where it scales a value (TIME_TO_REAL(CYCLE) / 1000.0: takt's TIME_TO_REAL
// counts milliseconds). docs/language-notes.md "OpenPLC's library blocks" gives the formulas.
constexpr std::string_view kOpenPlcFbs = R"ST(
(* Integrator: Q = NOT R1; R1 sets XOUT := X0, else while RUN XOUT := XOUT + XIN * CYCLE (in seconds). *)
FUNCTION_BLOCK INTEGRAL
VAR_INPUT
    RUN : BOOL;
    R1 : BOOL;
    XIN : REAL;
    X0 : REAL;
    CYCLE : TIME;
END_VAR
VAR_OUTPUT
    Q : BOOL;
    XOUT : REAL;
END_VAR
    Q := NOT R1;
    IF R1 THEN
        XOUT := X0;
    ELSIF RUN THEN
        XOUT := XOUT + XIN * (TIME_TO_REAL(CYCLE) / 1000.0);
    END_IF;
END_FUNCTION_BLOCK

(* Differentiator over the last four samples: while RUN XOUT := (3 (XIN - X3) + X1 - X2) / (10 CYCLE), then the samples shift; RUN FALSE gives XOUT 0 and fills the samples with XIN. *)
FUNCTION_BLOCK DERIVATIVE
VAR_INPUT
    RUN : BOOL;
    XIN : REAL;
    CYCLE : TIME;
END_VAR
VAR_OUTPUT
    XOUT : REAL;
END_VAR
VAR
    X1 : REAL;
    X2 : REAL;
    X3 : REAL;
END_VAR
    IF RUN THEN
        XOUT := (3.0 * (XIN - X3) + X1 - X2) / (10.0 * (TIME_TO_REAL(CYCLE) / 1000.0));
        X3 := X2;
        X2 := X1;
        X1 := XIN;
    ELSE
        XOUT := 0.0;
        X1 := XIN;
        X2 := XIN;
        X3 := XIN;
    END_IF;
END_FUNCTION_BLOCK

(* Boolean hysteresis on XIN1 - XIN2: Q turns TRUE above XIN2 + EPS, FALSE below XIN2 - EPS. *)
FUNCTION_BLOCK HYSTERESIS
VAR_INPUT
    XIN1 : REAL;
    XIN2 : REAL;
    EPS : REAL;
END_VAR
VAR_OUTPUT
    Q : BOOL;
END_VAR
    IF Q THEN
        IF XIN1 < XIN2 - EPS THEN
            Q := FALSE;
        END_IF;
    ELSIF XIN1 > XIN2 + EPS THEN
        Q := TRUE;
    END_IF;
END_FUNCTION_BLOCK

(* PID controller on ERROR = PV - SP: XOUT := KP (ERROR + ITERM / TR + DTERM * TD). AUTO FALSE sets the integral to TR (X0 - ERROR), so XOUT = KP * X0, and AUTO goes on from there. *)
FUNCTION_BLOCK PID
VAR_INPUT
    AUTO : BOOL;
    PV : REAL;
    SP : REAL;
    X0 : REAL;
    KP : REAL;
    TR : REAL;
    TD : REAL;
    CYCLE : TIME;
END_VAR
VAR_OUTPUT
    XOUT : REAL;
END_VAR
VAR
    ERROR : REAL;
    ITERM : INTEGRAL;
    DTERM : DERIVATIVE;
END_VAR
    ERROR := PV - SP;
    ITERM(RUN := AUTO, R1 := NOT AUTO, XIN := ERROR, X0 := TR * (X0 - ERROR), CYCLE := CYCLE);
    DTERM(RUN := AUTO, XIN := ERROR, CYCLE := CYCLE);
    XOUT := KP * (ERROR + ITERM.XOUT / TR + DTERM.XOUT * TD);
END_FUNCTION_BLOCK

(* Ramp from X0 to X1 in TR: while RUN, XOUT := XI + (X1 - XI) * T / TR and T grows by CYCLE per call; BUSY until T reaches TR, then XOUT = X1. RUN FALSE: XOUT := X0, the ramp restarts from there. *)
FUNCTION_BLOCK RAMP
VAR_INPUT
    RUN : BOOL;
    X0 : REAL;
    X1 : REAL;
    TR : TIME;
    CYCLE : TIME;
END_VAR
VAR_OUTPUT
    BUSY : BOOL;
    XOUT : REAL;
END_VAR
VAR
    XI : REAL;
    T : TIME;
END_VAR
    BUSY := RUN;
    IF RUN THEN
        IF T >= TR THEN
            BUSY := FALSE;
            XOUT := X1;
        ELSE
            XOUT := XI + (X1 - XI) * (TIME_TO_REAL(T) / 1000.0) / (TIME_TO_REAL(TR) / 1000.0);
            T := T + CYCLE;
        END_IF;
    ELSE
        XOUT := X0;
        XI := X0;
        T := T#0s;
    END_IF;
END_FUNCTION_BLOCK

(* Semaphore: BUSY := CLAIM OR (BUSY AND NOT RELEASE), kept in Q_INTERNAL. *)
FUNCTION_BLOCK SEMA
VAR_INPUT
    CLAIM : BOOL;
    RELEASE : BOOL;
END_VAR
VAR_OUTPUT
    BUSY : BOOL;
END_VAR
VAR
    Q_INTERNAL : BOOL;
END_VAR
    Q_INTERNAL := CLAIM OR (Q_INTERNAL AND NOT RELEASE);
    BUSY := Q_INTERNAL;
END_FUNCTION_BLOCK
)ST";

// GX Works3's edge one-shots, in every profile as truST has them (a project's own DIFU replaces
// them without a warning: isVendorLibraryFb). Run by the R_TRIG and F_TRIG natives (codegen/layout.cpp).
constexpr std::string_view kMitsubishiFbs = R"ST(
(* Mitsubishi rising-edge one-shot: Q = CLK AND NOT M; M := CLK (R_TRIG's semantics). *)
FUNCTION_BLOCK DIFU
VAR_INPUT
    CLK : BOOL;
END_VAR
VAR_OUTPUT
    Q : BOOL;
END_VAR
VAR
    M : BOOL;
END_VAR
END_FUNCTION_BLOCK

(* Mitsubishi falling-edge one-shot: Q = NOT CLK AND NOT M; M := NOT CLK (F_TRIG's semantics,
   so Q is TRUE on the first call with CLK FALSE, as truST runs it). *)
FUNCTION_BLOCK DIFD
VAR_INPUT
    CLK : BOOL;
END_VAR
VAR_OUTPUT
    Q : BOOL;
END_VAR
VAR
    M : BOOL;
END_VAR
END_FUNCTION_BLOCK
)ST";

// CODESYS's names for standard FB inputs (its library spells them out), beside the IEC ones.
struct CodesysParamName {
    std::string_view fb; // the FB, or a counter family: CTU also covers CTU_INT, CTU_DINT…
    std::string_view codesys;
    std::string_view iec;
};

constexpr CodesysParamName kCodesysParamNames[] = {
    {"CTU", "RESET", "R"}, {"CTD", "LOAD", "LD"}, {"CTUD", "RESET", "R"}, {"CTUD", "LOAD", "LD"},
    {"SR", "SET1", "S1"},  {"SR", "RESET", "R"},  {"RS", "SET", "S"},     {"RS", "RESET1", "R1"},
};

bool equalsUpper(std::string_view a, std::string_view upper) {
    if (a.size() != upper.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        const char c = a[i] >= 'a' && a[i] <= 'z' ? static_cast<char>(a[i] - 'a' + 'A') : a[i];
        if (c != upper[i]) {
            return false;
        }
    }
    return true;
}

} // namespace

std::string_view standardFbSource([[maybe_unused]] VendorProfile vendor) {
    // Every profile has the same blocks since DIFU and DIFD need none; the profile stays for the
    // vendors whose blocks clash with another's.
    static const std::string kAll = std::string(kStandardFbs) + std::string(kOpenPlcFbs) + std::string(kMitsubishiFbs);
    return kAll;
}

bool isVendorLibraryFb(std::string_view name) {
    for (std::string_view n : {"PID", "RAMP", "INTEGRAL", "DERIVATIVE", "HYSTERESIS", "SEMA", "DIFU", "DIFD"}) {
        if (equalsUpper(name, n)) {
            return true;
        }
    }
    return false;
}

std::string_view iecParameterName(std::string_view fb, std::string_view name) {
    for (const CodesysParamName& n : kCodesysParamNames) {
        const bool family = fb.size() > n.fb.size() && fb[n.fb.size()] == '_' && fb.find('_') == n.fb.size();
        if ((equalsUpper(fb, n.fb) || (family && equalsUpper(fb.substr(0, n.fb.size()), n.fb))) &&
            equalsUpper(name, n.codesys)) {
            return n.iec;
        }
    }
    return {};
}

} // namespace takt::compiler::sema
