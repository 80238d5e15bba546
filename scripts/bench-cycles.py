#!/usr/bin/env python3
"""Whole cycles as users see them: the bench programs under `takt harness --execution native`
against their C++ twins, side by side in one run (docs/performance.md).

Per program one harness process loads bench/programs/<program>.st, runs warm-up cycles, then
REPS `cycle` requests of N cycles each (1 ms of virtual time per cycle), each timed from outside
(request written to answer read, so the harness's own work per cycle and the JSON are in it), in
wall-clock time and in the harness's CPU time (every thread's, from /proc/PID/task/*/schedstat);
between two requests `takt_scan_runner native` runs the twin for N scans (its wall-clock and CPU
ns per scan). N is picked so that a request takes about TARGET_MS. The ratios per program are
those of the medians and of the fastest runs; on a machine shared with other work the CPU
columns are the steadier ones (a wall-clock figure is mostly the other processes' turns on the
core); on a VM whose CPUs run at different speeds, run the script under `taskset -c N` so that
the harness and the twin share one CPU. The `check` of the harness after all its cycles must equal the twin's after as many scans
(the script fails otherwise). First, the cost of a cycle of a one-statement program: what the
harness and the engine add around a body.

usage: scripts/bench-cycles.py [--build DIR] [--reps N] [--target-ms MS] [--execution native|interpreter]
                               [program ...]
TAKT_NATIVE_PLUGIN selects the tier's plugin (takt-native.so) to run, as for `takt`.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = ["int_arith", "real_math", "fb_calls", "timers_edges", "array_struct"]
# One statement: what a cycle costs the harness and the engine around the body.
ONE_STATEMENT = "PROGRAM Main\nVAR n : DINT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"


class Harness:
    def __init__(self, takt, execution):
        self.proc = subprocess.Popen([takt, "harness", "--execution", execution], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.cycles = 0

    def ask(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if not answer.get("ok"):
            raise RuntimeError(f"{request.get('cmd')}: {answer.get('error')}")
        return answer["data"]

    def load(self, source):
        self.ask({"cmd": "load", "source": source})
        self.cycles = 1  # the initial cycle at virtual time 0

    def cpu_ns(self):
        """The harness's time on a CPU so far (every thread's, from the scheduler), in ns."""
        total = 0
        task = f"/proc/{self.proc.pid}/task"
        for t in os.listdir(task):
            with open(f"{task}/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        return total

    def timed_cycles(self, count):
        """Wall-clock and CPU ns per cycle of one request of `count` cycles."""
        cpu = self.cpu_ns()
        started = time.perf_counter_ns()
        self.ask({"cmd": "cycle", "count": count, "dt_ms": 1})
        wall = time.perf_counter_ns() - started
        self.cycles += count
        return wall / count, (self.cpu_ns() - cpu) / count

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def twin(runner, program, scans):
    """The twin's wall-clock and CPU ns per scan over `scans` scans, and its check."""
    out = subprocess.run([runner, "native", os.path.join(ROOT, "bench", "programs", program + ".st"), str(scans)],
                         capture_output=True, text=True, check=True)
    cpu, rest = out.stderr.split("ns/scan CPU,")
    wall = float(rest.split("ns/scan wall")[0])
    return (wall, float(cpu)), float(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TAKT_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--target-ms", type=float, default=30.0)
    ap.add_argument("--execution", default="native")
    ap.add_argument("programs", nargs="*", default=PROGRAMS)
    args = ap.parse_args()
    takt = os.path.join(args.build, "takt")
    runner = os.path.join(args.build, "bench", "takt_scan_runner")
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"takt harness --execution {args.execution} against the twins, wall clock, {args.reps} requests each "
          f"(load average {load})")

    base = Harness(takt, args.execution)
    base.load(ONE_STATEMENT)
    base.timed_cycles(20000)
    own = [base.timed_cycles(200000) for _ in range(5)]
    base.close()
    print(f"one-statement program: {min(w for w, _ in own):.1f} ns wall, {min(c for _, c in own):.1f} ns CPU per "
          "cycle (fastest of 5 requests of 200,000 cycles)")
    print("ns per cycle: the twin's and the harness's (wall clock and CPU, median and fastest of the requests); "
          "× = harness / twin")
    print(f"{'program':<14}{'twin wall':>10}{'harness':>10}{'×':>7}{'min ×':>7}{'twin CPU':>10}{'harness':>10}"
          f"{'×':>7}{'min ×':>7}{'cycles':>8}  check")
    columns = {"wall": [], "wall min": [], "cpu": [], "cpu min": []}
    failed = False
    for p in args.programs:
        with open(os.path.join(ROOT, "bench", "programs", p + ".st")) as f:
            source = f.read()
        h = Harness(takt, args.execution)
        h.load(source)
        h.timed_cycles(50)
        per = min(h.timed_cycles(50)[0] for _ in range(3))
        n = max(100, int(args.target_ms * 1e6 / max(per, 1.0)))
        twin(runner, p, n)  # warm-up of the twin's binary
        hs, ts = [], []
        for _ in range(args.reps):
            hs.append(h.timed_cycles(n))
            ts.append(twin(runner, p, n)[0])
        check = h.ask({"cmd": "get_output", "name": "check"})["value"]["value"]
        _, twin_check = twin(runner, p, h.cycles)
        h.close()
        same = check == twin_check
        failed |= not same
        row = f"{p:<14}"
        for i, key in ((0, "wall"), (1, "cpu")):
            hv, tv = [x[i] for x in hs], [x[i] for x in ts]
            r, rm = statistics.median(hv) / statistics.median(tv), min(hv) / min(tv)
            columns[key].append(r)
            columns[key + " min"].append(rm)
            row += f"{statistics.median(tv):>10.1f}{statistics.median(hv):>10.1f}{r:>6.2f}×{rm:>6.2f}×"
        print(row + f"{n:>8}  {check!r} {'=' if same else '≠'} twin {twin_check!r}")
    gm = {k: math.exp(sum(map(math.log, v)) / len(v)) for k, v in columns.items()}
    print(f"{'geometric mean':<34}{gm['wall']:>6.2f}×{gm['wall min']:>6.2f}×{'':>20}{gm['cpu']:>6.2f}×"
          f"{gm['cpu min']:>6.2f}×")
    with open("/proc/loadavg") as f:
        print("load average after: " + " ".join(f.read().split()[:3]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
