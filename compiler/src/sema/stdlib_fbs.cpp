// The standard function blocks (LANGUAGE.md "Standard FBs"): their interfaces as ST, parsed as
// an extra unit named "<stdlib>" so that instances, member access and calls are checked like
// any user FB. The bodies are empty here: the VM implements them natively with the pinned
// semantics written in the comments (LANGUAGE.md, "Pinned semantics").
#include "sema/context.h"

namespace takt::compiler::sema {

namespace {

constexpr std::string_view kStandardFbs = R"ST(
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

// GX Works3's edge one-shots, under trust-lsp.toml vendor_profile = "mitsubishi" only (a CODESYS
// project may name its own FB DIFU). Run by the R_TRIG and F_TRIG natives (codegen/layout.cpp).
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

std::string_view standardFbSource(VendorProfile vendor) {
    static const std::string kWithMitsubishi = std::string(kStandardFbs) + std::string(kMitsubishiFbs);
    return vendor == VendorProfile::Mitsubishi ? std::string_view(kWithMitsubishi) : kStandardFbs;
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
