#!/usr/bin/env bash
# The side-by-side program benchmark (bench/programs/*.st): builds takt_bench and
# takt_scan_runner (-O2, RelWithDebInfo), runs BM_St / BM_Native / BM_Lua with repetitions and
# prints the median ns per scan with the ratios takt/native and lua/native per program and
# their geometric means; then LuaJIT's interpreter (luajit -joff) on the same Lua when installed;
# then instructions per scan of each program under callgrind (the difference between two scan
# counts, so compile and start-up cost drop out).
# Environment: TAKT_BUILD_DIR (default build/), REPS (default 5), FILTER (program regex).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TAKT_BUILD_DIR:-$root/build}
reps=${REPS:-5}
filter=${FILTER:-.*}
bash "$root/scripts/setup.sh"
# valgrind only for the instruction counts, so it is installed here and not by CI's setup.
if ! command -v valgrind >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTAKT_BENCH=ON >/dev/null
else
  cmake "$build" -DTAKT_BENCH=ON >/dev/null
fi
ninja -C "$build" -j2 takt_bench takt_scan_runner

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/bench/takt_bench" --benchmark_filter="^BM_(St|Native|Lua)/($filter)\$" \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/programs.json" --benchmark_out_format=json >/dev/null

python3 - "$out/programs.json" <<'PY'
import json, math, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
med, check = {}, {}
for b in runs:
    if b.get("aggregate_name") != "median":
        continue
    kind, program = b["run_name"].split("/", 1)
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    med[(kind, program)] = b["real_time"] * unit
    check[(kind, program)] = b.get("check")
programs = [p for k, p in med if k == "BM_Native"]
print(f"{'program':<14}{'native ns':>12}{'takt ns':>12}{'lua ns':>12}{'takt/native':>13}{'lua/native':>12}{'lua/takt':>10}")
logs = {"takt": [], "lua": []}
for p in programs:
    nan = float("nan")
    n, t, l = med.get(("BM_Native", p), nan), med.get(("BM_St", p), nan), med.get(("BM_Lua", p), nan)
    rt, rl = t / n, l / n
    logs["takt"].append(math.log(rt)); logs["lua"].append(math.log(rl))
    print(f"{p:<14}{n:>12.1f}{t:>12.1f}{l:>12.1f}{rt:>12.2f}x{rl:>11.2f}x{l / t:>9.2f}x")
gm = {k: math.exp(sum(v) / len(v)) for k, v in logs.items() if v}
print(f"{'geomean':<50}{gm['takt']:>12.2f}x{gm['lua']:>11.2f}x")
PY

if command -v luajit >/dev/null; then
  echo
  echo "luajit -joff (LuaJIT's interpreter), median of $reps runs of 200 scans, ns/scan"
  for f in "$root"/bench/lua/*.lua; do
    p=$(basename "$f" .lua)
    [[ $p =~ ^($filter)$ ]] || continue
    luajit -joff -e "dofile('$f'); for n = 0, 49 do scan(n * 1000000) end
      local t = {}
      for r = 1, $reps do
        local t0 = os.clock(); for n = 1, 200 do scan((n + 50) * 1000000) end
        t[r] = (os.clock() - t0) / 200 * 1e9
      end
      table.sort(t); print(string.format('%-14s%12.1f', '$p', t[math.floor(($reps + 1) / 2)]))"
  done
fi

echo
echo "callgrind: instructions per scan ((I(110 scans) - I(10 scans)) / 100)"
instr() { # mode program scans -> total instructions
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$build/bench/takt_scan_runner" "$1" \
    "$root/bench/programs/$2.st" "$3" >/dev/null 2>&1
  sed -n 's/^summary: //p' "$out/cg.out"
}
printf '%-14s%14s%14s%10s\n' program takt native ratio
for f in "$root"/bench/programs/*.st; do
  p=$(basename "$f" .st)
  [[ $p =~ ^($filter)$ ]] || continue
  st=$(( ($(instr st "$p" 110) - $(instr st "$p" 10)) / 100 ))
  nat=$(( ($(instr native "$p" 110) - $(instr native "$p" 10)) / 100 ))
  printf '%-14s%14d%14d%9.1fx\n' "$p" "$st" "$nat" "$(awk -v a="$st" -v b="$nat" 'BEGIN { print a / b }')"
done
