#pragma once
// A program with calls of every kind, run by the native tier's tests against the interpreter: a
// FUNCTION with a VAR_IN_OUT, FBs calling it, methods called directly, virtually (THIS^.Area,
// which Square overrides) and through an interface, standard FBs (TON, R_TRIG, CTU), strings.

namespace takt::engine {

inline constexpr const char* kCalls = R"(
INTERFACE IShape
METHOD Area : REAL
END_METHOD
END_INTERFACE
FUNCTION_BLOCK Rect IMPLEMENTS IShape
VAR_INPUT w, h : REAL; END_VAR
VAR calls : DINT; END_VAR
METHOD Area : REAL
  calls := calls + 1;
  Area := w * h;
END_METHOD
METHOD Twice : REAL
  Twice := THIS^.Area() * 2.0;
END_METHOD
END_FUNCTION_BLOCK
FUNCTION_BLOCK Square EXTENDS Rect
METHOD Area : REAL
  calls := calls + 10;
  Area := w * w;
END_METHOD
END_FUNCTION_BLOCK
FUNCTION Scale : DINT
VAR_INPUT x : DINT; k : DINT; END_VAR
VAR_IN_OUT total : DINT; END_VAR
total := total + x;
Scale := x * k;
END_FUNCTION
FUNCTION_BLOCK Acc
VAR_INPUT x : DINT; END_VAR
VAR_OUTPUT sum : DINT; last : DINT; END_VAR
sum := sum + x;
last := Scale(x, 3, sum);
END_FUNCTION_BLOCK
PROGRAM p
VAR
  n : DINT; acc : Acc; accs : ARRAY[1..3] OF Acc; r : Rect; sq : Square; shape : IShape;
  area, twice : REAL; t : TON; trig : R_TRIG; ctr : CTU; edges : DINT;
  s : STRING[20]; len : INT; cmp : BOOL; k : INT;
END_VAR
n := n + 1;
acc(x := n);
FOR k := 1 TO 3 DO accs[k](x := n * k); END_FOR;
r.w := 2.0; r.h := DINT_TO_REAL(n);
sq.w := 1.5;
IF n MOD 2 = 0 THEN shape := r; ELSE shape := sq; END_IF;
area := shape.Area();
twice := sq.Twice() + r.Twice();
t(IN := n MOD 7 <> 0, PT := T#3ms);
trig(CLK := t.Q);
IF trig.Q THEN edges := edges + 1; END_IF;
ctr(CU := t.Q, RESET := n MOD 20 = 0, PV := 3);
s := CONCAT(LEFT('abcdef', n MOD 6), DINT_TO_STRING(n));
len := LEN(s);
cmp := s > 'abc';
END_PROGRAM
CONFIGURATION c RESOURCE r ON PLC TASK t(INTERVAL := T#1ms); PROGRAM i WITH t : p; END_RESOURCE END_CONFIGURATION
)";

} // namespace takt::engine
