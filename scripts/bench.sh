#!/usr/bin/env bash
# The side-by-side program benchmark (bench/programs/*.st) and the compile times of the native
# tier (docs/performance.md):
# 1. takt_bench (-O2, RelWithDebInfo) runs BM_Native (the C++ twin), BM_St (the interpreter),
#    BM_Tier (the native execution tier) and BM_Lua (Lua 5.4) in one process with repetitions;
#    LuaJIT runs the same Lua files with its JIT on (`luajit`) and off (`luajit -joff`) in
#    processes of the same run. One table: the twin's median CPU ns per scan and every other
#    column as a multiple of it, MATIEC -O2's ratios beside them, geometric means; the tier's status
#    (native, or the reason it fell back to the interpreter) and compile time per program.
# 2. The `check` of every variant after CHECK_SCANS scans (takt_scan_runner, luajit): the
#    interpreter and the tier must equal the twin (the script fails otherwise); LuaJIT's is shown
#    beside it (Lua computes REAL in double, so the REAL programs differ in the last digits).
# 3. Compile times: `takt build` and the tier's compile (takt_scan_runner compile, the engine's
#    own compile call) of a generated 50,000-line project (scripts/gen-large-project.py, with and
#    without calls), of examples/demo and of the demo after an online-change edit.
# 4. Instructions per scan under callgrind of the twin, the interpreter and the tier (the
#    difference between two scan counts, so compile and start-up cost drop out). CALLGRIND=0
#    skips it.
# Environment: TAKT_BUILD_DIR (default build/), REPS (default 5), FILTER (program regex),
# CHECK_SCANS (default 300), LINES (generated project, default 50000), COMPILES (default 3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_BUILD_DIR:-$root/build}
reps=${REPS:-5}
filter=${FILTER:-.*}
check_scans=${CHECK_SCANS:-300}
lines=${LINES:-50000}
compiles=${COMPILES:-3}
bash "$root/scripts/setup.sh"
# valgrind for the instruction counts and LuaJIT for its columns are installed here, not by CI's
# setup.
need=()
[ "${CALLGRIND:-1}" = 0 ] || command -v valgrind >/dev/null || need+=(valgrind)
command -v luajit >/dev/null || need+=(luajit)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAKT_BENCH=ON >/dev/null
else
  cmake "$build" -DTAKT_BENCH=ON >/dev/null
fi
ninja -C "$build" -j2 takt takt_bench takt_scan_runner
runner=$build/bench/takt_scan_runner

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
programs=()
for f in "$root"/bench/programs/*.st; do
  p=$(basename "$f" .st)
  [[ $p =~ ^($filter)$ ]] && programs+=("$p")
done

echo "takt_bench: BM_Native, BM_St, BM_Tier, BM_Lua, $reps repetitions (load average $(cut -d' ' -f1-3 /proc/loadavg))"
"$build/bench/takt_bench" --benchmark_filter="^BM_(St|Tier|Native|Lua)/($filter)\$" \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/programs.json" --benchmark_out_format=json >/dev/null

# LuaJIT: 50 warm-up scans, then REPS runs of 200 scans timed with os.clock (CPU time, as the
# cpu_time of takt_bench that the table uses), the median in ns per scan.
for p in "${programs[@]}"; do
  for mode in jit joff; do
    flag=""
    [ $mode = joff ] && flag=-joff
    ns=$(luajit $flag -e "
      dofile('$root/bench/lua/$p.lua')
      for n = 0, 49 do scan(n * 1000000) end
      local t = {}
      for r = 1, $reps do
        local t0 = os.clock(); for n = 1, 200 do scan((n + 50 + r * 200) * 1000000) end
        t[r] = (os.clock() - t0) / 200 * 1e9
      end
      table.sort(t); print(string.format('%.1f', t[math.floor(($reps + 1) / 2)]))")
    echo "$p $mode $ns" >>"$out/luajit.txt"
  done
done

# The check values after the same scans at the same timestamps (0, 1 ms, 2 ms, ...).
for p in "${programs[@]}"; do
  st="$root/bench/programs/$p.st"
  twin=$("$runner" native "$st" "$check_scans" 2>/dev/null)
  interp=$("$runner" st "$st" "$check_scans" 2>/dev/null)
  tier=$("$runner" tier "$st" "$check_scans" 2>/dev/null)
  lua=$(luajit -e "dofile('$root/bench/lua/$p.lua'); for n = 0, $check_scans - 1 do scan(n * 1000000) end
    print(string.format('%.17g', result()))")
  luaoff=$(luajit -joff -e "dofile('$root/bench/lua/$p.lua'); for n = 0, $check_scans - 1 do scan(n * 1000000) end
    print(string.format('%.17g', result()))")
  echo "$p $twin $interp $tier $lua $luaoff" >>"$out/checks.txt"
done

python3 - "$out/programs.json" "$out/luajit.txt" "$out/checks.txt" "$check_scans" <<'PY'
import json, math, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
med, label, compile_ms = {}, {}, {}
# The medians of the repetitions; with REPS=1 Google Benchmark writes no aggregates, so the one run.
single = not any(b.get("aggregate_name") == "median" for b in runs)
for b in runs:
    if b.get("aggregate_name") != "median" and not (single and b.get("run_type") == "iteration"):
        continue
    kind, program = b["run_name"].split("/", 1)
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    # CPU time: on a shared machine a scan's wall-clock time includes the time other processes
    # held the core (a twin's median read 2.9 µs wall-clock for 0.73 µs of CPU under load).
    med[(kind, program)] = b["cpu_time"] * unit
    if kind == "BM_Tier":
        label[program] = b.get("label", "?")
        compile_ms[program] = b.get("compile_ms")
for line in open(sys.argv[2]):
    p, mode, ns = line.split()
    med[("luajit" if mode == "jit" else "luajit-joff", p)] = float(ns)
# MATIEC -> C at -O2 (the OpenPLC route) on the same programs, measured against the same twins.
matiec = {"int_arith": 1.20, "real_math": 1.23, "fb_calls": 3.34, "timers_edges": 8.73, "array_struct": 3.95}
cols = [("interpreter", "BM_St"), ("native tier", "BM_Tier"), ("luajit", "luajit"),
        ("luajit -joff", "luajit-joff"), ("Lua 5.4", "BM_Lua")]
programs = [p for k, p in med if k == "BM_Native"]
nan = float("nan")
print()
print("CPU time per scan: the twin's in ns, the others as multiples of it")
print(f"{'program':<14}{'twin ns':>10}" + "".join(f"{c + ' ×':>15}" for c, _ in cols) + f"{'MATIEC ×':>11}")
logs = {k: [] for _, k in cols + [("", "matiec")]}
for p in programs:
    twin = med[("BM_Native", p)]
    row = f"{p:<14}{twin:>10.1f}"
    for _, k in cols:
        r = med.get((k, p), nan) / twin
        if not math.isnan(r):
            logs[k].append(math.log(r))
        row += f"{r:>14.2f}x"
    m = matiec.get(p, nan)
    logs["matiec"].append(math.log(m))
    print(row + f"{m:>10.2f}x")
gm = lambda k: math.exp(sum(logs[k]) / len(logs[k])) if logs[k] else nan
print(f"{'geomean':<24}" + "".join(f"{gm(k):>14.2f}x" for _, k in cols) + f"{gm('matiec'):>10.2f}x")
print()
print("native tier per program: what it ran on, compile time (translation, -O2, code generation)")
for p in programs:
    ms = compile_ms.get(p)
    print(f"  {p:<14}{label.get(p, '?')}" + (f", {ms:.1f} ms" if ms else ""))
print()
print(f"check after {sys.argv[4]} scans (interpreter and tier must equal the twin; Lua computes REAL in double)")
print(f"{'program':<14}{'twin':>24}{'interpreter':>14}{'tier':>8}{'luajit':>24}{'luajit -joff':>24}")
bad = 0
for line in open(sys.argv[3]):
    p, twin, interp, tier, lua, luaoff = line.split()
    same = lambda v: "=" if v == twin else "DIFFERS " + v
    bad += interp != twin or tier != twin
    print(f"{p:<14}{twin:>24}{same(interp):>14}{same(tier):>8}{lua:>24}{luaoff:>24}")
sys.exit(1 if bad else 0)
PY

echo
echo "compile times: takt build (median of 3) and the native tier's compile (median of $compiles)"
build_ms() { # project dir -> median ms of 3 `takt build`
  for _ in 1 2 3; do
    s=$(date +%s%N)
    "$build/takt" build --project "$1" >/dev/null 2>&1
    echo $(( ($(date +%s%N) - s) / 1000000 ))
  done | sort -n | sed -n 2p
}
tier_ms() { # project dir -> the tier's status and compile time of its program.stbc
  "$runner" compile "$1/program.stbc" "$compiles" | tr '\n' ';' | sed 's/;$//; s/;/; /g'
}
python3 "$root/scripts/gen-large-project.py" "$out/large" --lines "$lines"
python3 "$root/scripts/gen-large-project.py" "$out/flat" --lines "$lines" --no-calls
cp -r "$root/examples/demo" "$out/demo"
rm -rf "$out/demo/.takt" "$out/demo/program.stbc"
for project in large flat demo; do
  ms=$(build_ms "$out/$project")
  n=$(cat "$out/$project"/src/*.st | wc -l)
  echo "$project ($n lines): takt build $ms ms ($(( n * 1000 / (ms > 0 ? ms : 1) )) lines/s); $(tier_ms "$out/$project")"
done
# An online change of the demo: a changed constant; the reload compiles the new module with the
# same call.
sed -i '0,/:= 40.0;/s//:= 42.0;/' "$out/demo/src/tank.st"
"$build/takt" build --project "$out/demo" >/dev/null 2>&1
echo "demo after an online-change edit: $(tier_ms "$out/demo")"

[ "${CALLGRIND:-1}" = 0 ] && exit 0
echo
echo "callgrind: instructions per scan ((I(110 scans) - I(10 scans)) / 100)"
# Without its debug information: valgrind 3.19 (Debian 12) gives up on clang 14's DWARF 5, and
# instruction counts do not need it.
objcopy --strip-debug "$runner" "$out/scan_runner"
instr() { # mode program scans -> total instructions
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$out/scan_runner" "$1" \
    "$root/bench/programs/$2.st" "$3" >/dev/null 2>&1
  sed -n 's/^summary: //p' "$out/cg.out"
}
printf '%-14s%14s%14s%14s%14s%10s\n' program twin interpreter 'native tier' 'interp ×' 'tier ×'
for p in "${programs[@]}"; do
  st=$(( ($(instr st "$p" 110) - $(instr st "$p" 10)) / 100 ))
  tier=$(( ($(instr tier "$p" 110) - $(instr tier "$p" 10)) / 100 ))
  nat=$(( ($(instr native "$p" 110) - $(instr native "$p" 10)) / 100 ))
  printf '%-14s%14d%14d%14d%13.1fx%9.1fx\n' "$p" "$nat" "$st" "$tier" \
    "$(awk -v a="$st" -v b="$nat" 'BEGIN { print a / b }')" "$(awk -v a="$tier" -v b="$nat" 'BEGIN { print a / b }')"
done
