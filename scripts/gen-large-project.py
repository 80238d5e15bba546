#!/usr/bin/env python3
"""Writes a generated ST project of about --lines lines (default 50,000) for compile-time figures
(docs/performance.md): `takt build` and the native tier's compile of a project the size of a real
machine. Deterministic: the same arguments give the same files.

The shape of a machine project: per station a TYPE block (a step enum, a slot struct), a FUNCTION
and a FUNCTION_BLOCK with a CASE step sequence, timers (TON), edges (R_TRIG), arrays of structs,
FOR and WHILE loops, a PI loop, a moving average, a sorting pass and an alarm word; PROGRAMs (one
per cell of ten stations) call the stations, a CONFIGURATION runs the cells in two tasks.

--no-calls writes the same stations as PROGRAMs without any call (timers and edges by hand, the
FUNCTION inline), for a native tier that does not translate calls yet: its compile time is then
measured on the same amount of code.

    python3 scripts/gen-large-project.py OUT_DIR [--lines 50000] [--no-calls]
"""
import argparse
import os

STEPS = ["Idle", "Homing", "Ready", "Working", "Unload", "Fault"]


def limit(target, x, lo, hi, calls, k):
    """target := x clamped to [lo, hi], as a call of the station's FUNCTION or inline."""
    if calls:
        return [f"{target} := F_Limit{k}(X := {x}, Lo := {lo}, Hi := {hi});"]
    return [f"{target} := {x};",
            f"IF {target} < {lo} THEN",
            f"    {target} := {lo};",
            f"ELSIF {target} > {hi} THEN",
            f"    {target} := {hi};",
            "END_IF;"]


def timer(name, cond, pt_ms, calls):
    """name.Q after cond held for pt_ms (TON, or the elapsed time counted by hand)."""
    if calls:
        return [f"{name}(IN := {cond}, PT := T#{pt_ms}ms);"]
    return [f"IF {cond} THEN",
            f"    IF {name}_ET < T#{pt_ms}ms THEN",
            f"        {name}_ET := {name}_ET + T#10ms;",
            "    END_IF;",
            "ELSE",
            f"    {name}_ET := T#0ms;",
            "END_IF;",
            f"{name}_Q := {name}_ET >= T#{pt_ms}ms;"]


def q(name, calls):
    return f"{name}.Q" if calls else f"{name}_Q"


def station(k, calls):
    """One station: its types, its FUNCTION (with calls) and its FB (or PROGRAM without)."""
    slots = 8 + k % 9
    hist = 16 + 8 * (k % 3)
    kp = 0.5 + (k % 7) * 0.1
    s = [f"(* Station {k}: sequence, dosing loop and slot tracking. *)",
         "TYPE",
         f"    E_Step{k} : ({', '.join(f'S{k}_{n}' for n in STEPS)});",
         f"    ST_Slot{k} : STRUCT",
         "        Present : BOOL;",
         "        Weight  : REAL;",
         "        Count   : DINT;",
         "        Code    : INT;",
         "    END_STRUCT;",
         "END_TYPE",
         ""]
    if calls:
        s += [f"FUNCTION F_Limit{k} : REAL",
              "VAR_INPUT",
              "    X, Lo, Hi : REAL;",
              "END_VAR",
              "IF X < Lo THEN",
              f"    F_Limit{k} := Lo;",
              "ELSIF X > Hi THEN",
              f"    F_Limit{k} := Hi;",
              "ELSE",
              f"    F_Limit{k} := X;",
              "END_IF;",
              "END_FUNCTION",
              ""]
    io_in = ["    Enable   : BOOL;", "    Start    : BOOL;", "    Reset    : BOOL;",
             "    Sensor   : INT;", f"    Setpoint : REAL := {10 + k % 40}.0;"]
    io_out = ["    Running  : BOOL;", "    Alarm    : BOOL;", "    Output   : REAL;",
              "    Produced : DINT;", "    AlarmWord : WORD;"]
    if calls:
        s += [f"FUNCTION_BLOCK FB_Station{k}", "VAR_INPUT", *io_in, "END_VAR", "VAR_OUTPUT", *io_out, "END_VAR"]
    else:
        s += [f"PROGRAM P_Station{k}", "VAR", *io_in, *io_out, "END_VAR"]
    s += ["VAR",
          f"    Step      : E_Step{k};",
          f"    Slots     : ARRAY[0..{slots - 1}] OF ST_Slot{k};",
          f"    History   : ARRAY[0..{hist - 1}] OF REAL;",
          f"    Sorted    : ARRAY[0..{slots - 1}] OF INT;",
          "    HistIdx   : INT;",
          "    Sum, Avg, Err, Integral : REAL;",
          "    i, j, Swap, Blocked : INT;",
          "    Cycles    : DINT;"]
    timers = ["StepTimer", "JamTimer", "HomeTimer"]
    if calls:
        s += [f"    {t} : TON;" for t in timers] + ["    StartEdge : R_TRIG;"]
    else:
        s += [f"    {t}_ET : TIME;" for t in timers] + [f"    {t}_Q : BOOL;" for t in timers]
        s += ["    StartEdge_Q, StartPrev : BOOL;"]
    s += ["END_VAR", ""]
    b = []
    b += ["(* the step sequence *)"]
    if calls:
        b += ["StartEdge(CLK := Start);"]
    else:
        b += ["StartEdge_Q := Start AND NOT StartPrev;", "StartPrev := Start;"]
    b += timer("StepTimer", f"Step = S{k}_Working", 200 + 10 * (k % 50), calls)
    b += timer("HomeTimer", f"Step = S{k}_Homing", 100 + 10 * (k % 20), calls)
    b += timer("JamTimer", f"Running AND Sensor < {100 + k % 900}", 2000, calls)
    b += ["CASE Step OF",
          f"    S{k}_Idle:",
          "        Running := FALSE;",
          f"        IF Enable AND {q('StartEdge', calls)} THEN",
          f"            Step := S{k}_Homing;",
          "        END_IF;",
          f"    S{k}_Homing:",
          f"        IF {q('HomeTimer', calls)} THEN",
          f"            Step := S{k}_Ready;",
          "        END_IF;",
          f"    S{k}_Ready:",
          "        IF NOT Enable THEN",
          f"            Step := S{k}_Idle;",
          "        ELSIF Slots[0].Present THEN",
          f"            Step := S{k}_Working;",
          "            Running := TRUE;",
          "        END_IF;",
          f"    S{k}_Working:",
          f"        IF {q('JamTimer', calls)} THEN",
          f"            Step := S{k}_Fault;",
          f"        ELSIF {q('StepTimer', calls)} THEN",
          f"            Step := S{k}_Unload;",
          "        END_IF;",
          f"    S{k}_Unload:",
          "        Produced := Produced + 1;",
          "        Running := FALSE;",
          f"        Step := S{k}_Ready;",
          f"    S{k}_Fault:",
          "        Running := FALSE;",
          "        IF Reset THEN",
          f"            Step := S{k}_Idle;",
          "        END_IF;",
          "END_CASE;",
          "",
          "(* moving average of the sensor and the dosing PI loop *)",
          "History[HistIdx] := INT_TO_REAL(Sensor) * 0.1;",
          f"HistIdx := (HistIdx + 1) MOD {hist};",
          "Sum := 0.0;",
          f"FOR i := 0 TO {hist - 1} DO",
          "    Sum := Sum + History[i];",
          "END_FOR;",
          f"Avg := Sum / {hist}.0;",
          "Err := Setpoint - Avg;",
          "IF Running THEN"]
    b += ["    " + line for line in limit("Integral", "Integral + Err * 0.01", "-50.0", "50.0", calls, k)]
    b += ["ELSE", "    Integral := 0.0;", "END_IF;"]
    b += limit("Output", f"Err * {kp:.1f} + Integral", "0.0", "100.0", calls, k)
    b += ["",
          "(* slot tracking: shift on unload, count what is present *)",
          f"IF Step = S{k}_Unload THEN",
          f"    FOR i := {slots - 1} TO 1 BY -1 DO",
          "        Slots[i] := Slots[i - 1];",
          "    END_FOR;",
          "    Slots[0].Present := FALSE;",
          "END_IF;",
          f"Slots[0].Present := Slots[0].Present OR (Sensor > {200 + k % 300});",
          "Slots[0].Weight := Avg;",
          "Blocked := 0;",
          f"FOR i := 0 TO {slots - 1} DO",
          "    IF Slots[i].Present THEN",
          "        Slots[i].Count := Slots[i].Count + 1;",
          "        Slots[i].Code := (Slots[i].Code + i * 7 + 1) MOD 1000;",
          "        IF Slots[i].Weight > Setpoint THEN",
          "            Blocked := Blocked + 1;",
          "        END_IF;",
          "    END_IF;",
          "END_FOR;",
          "",
          "(* one pass of sorting the slot codes for the reject gate *)",
          f"FOR i := 0 TO {slots - 1} DO",
          "    Sorted[i] := Slots[i].Code;",
          "END_FOR;",
          f"FOR i := 0 TO {slots - 2} DO",
          f"    FOR j := 0 TO {slots - 2} - i DO",
          "        IF Sorted[j] > Sorted[j + 1] THEN",
          "            Swap := Sorted[j];",
          "            Sorted[j] := Sorted[j + 1];",
          "            Sorted[j + 1] := Swap;",
          "        END_IF;",
          "    END_FOR;",
          "END_FOR;",
          "",
          "(* the alarm word for the HMI *)",
          "AlarmWord := 0;",
          f"IF Step = S{k}_Fault THEN",
          "    AlarmWord := AlarmWord OR 16#0001;",
          "END_IF;",
          f"IF Blocked > {slots // 2} THEN",
          "    AlarmWord := AlarmWord OR 16#0002;",
          "END_IF;",
          "IF Output >= 100.0 THEN",
          "    AlarmWord := AlarmWord OR 16#0004;",
          "END_IF;",
          "Alarm := AlarmWord <> 0;",
          "Cycles := Cycles + 1;",
          "WHILE Blocked > 4 DO",
          "    Blocked := Blocked - 4;",
          "    Cycles := Cycles + 1;",
          "END_WHILE;"]
    s += b
    s += ["END_FUNCTION_BLOCK" if calls else "END_PROGRAM", ""]
    return s


def cell(c, members):
    """A PROGRAM calling the stations of one cell, fed from the cell's own I/O image."""
    s = [f"(* Cell {c}: stations {members[0]} to {members[-1]}. *)",
         f"PROGRAM P_Cell{c}",
         "VAR",
         "    CellEnable : BOOL := TRUE;",
         "    CellStart  : BOOL;",
         "    CellReset  : BOOL;",
         f"    Sensors    : ARRAY[0..{len(members) - 1}] OF INT;",
         "    Total      : DINT;",
         "    AnyAlarm   : BOOL;",
         "    Tick, n    : INT;"]
    s += [f"    St{k} : FB_Station{k};" for k in members]
    s += ["END_VAR",
          "Tick := (Tick + 1) MOD 1000;",
          "CellStart := Tick = 10;",
          "CellReset := Tick = 500;",
          f"FOR n := 0 TO {len(members) - 1} DO",
          "    Sensors[n] := (Sensors[n] * 13 + n * 17 + Tick + 5) MOD 1000;",
          "END_FOR;",
          "Total := 0;",
          "AnyAlarm := FALSE;"]
    for n, k in enumerate(members):
        s += [f"St{k}(Enable := CellEnable, Start := CellStart, Reset := CellReset, Sensor := Sensors[{n}]);",
              f"Total := Total + St{k}.Produced;",
              f"AnyAlarm := AnyAlarm OR St{k}.Alarm;"]
    s += ["END_PROGRAM", ""]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--no-calls", action="store_true")
    args = ap.parse_args()
    calls = not args.no_calls
    per_cell = 10
    per_station = len(station(1, calls)) + (len(cell(0, list(range(per_cell)))) / per_cell if calls else 1)
    count = max(per_cell, round(args.lines / per_station / per_cell) * per_cell)
    src = os.path.join(args.out, "src")
    os.makedirs(src, exist_ok=True)
    total = 0
    for c in range(count // per_cell):
        members = list(range(c * per_cell, (c + 1) * per_cell))
        text = [line for k in members for line in station(k, calls)]
        if calls:
            text += cell(c, members)
        total += len(text)
        with open(os.path.join(src, f"cell{c:03d}.st"), "w") as f:
            f.write("\n".join(text) + "\n")
    conf = ["CONFIGURATION Plant", "    RESOURCE Main ON PLC",
            "        TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);",
            "        TASK Slow (INTERVAL := T#100ms, PRIORITY := 2);"]
    if calls:
        units = [(f"Cell{c}", f"P_Cell{c}") for c in range(count // per_cell)]
    else:
        units = [(f"Station{k}", f"P_Station{k}") for k in range(count)]
    conf += [f"        PROGRAM {name} WITH {'Fast' if n % 2 == 0 else 'Slow'} : {pou};"
             for n, (name, pou) in enumerate(units)]
    conf += ["    END_RESOURCE", "END_CONFIGURATION"]
    total += len(conf)
    with open(os.path.join(src, "configuration.st"), "w") as f:
        f.write("\n".join(conf) + "\n")
    with open(os.path.join(args.out, "runtime.toml"), "w") as f:
        f.write("# Generated by scripts/gen-large-project.py\n[bundle]\nversion = 1\n\n"
                "[resource]\nname = \"plant\"\ncycle_interval_ms = 10\n")
    print(f"{args.out}: {count} stations, {total} lines of ST")


if __name__ == "__main__":
    main()
