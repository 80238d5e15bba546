#!/usr/bin/env python3
"""How soon a large program runs on the native tier (docs/performance.md): a generated project
(scripts/gen-large-project.py, default 50,000 lines) built once, then `takt run --execution native`
with [runtime] native_start = "background" and "wait", timing from the process start to the log's
`running` line (the scan loop started: the first cycle follows within one period) and to its
`execution: native (compiled in …)` line. One run of each, printed as a table; wall clock, so
read it beside the machine's load (printed).

    python3 scripts/native-start.py [--takt build/takt] [--lines 50000] [--timeout 600]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed_run(takt, project, start, timeout):
    """Seconds to the `running` line and to the native line (None when not seen)."""
    with open(os.path.join(project, "runtime.toml"), "a") as f:
        f.write(f'\n[runtime]\nexecution = "native"\nnative_start = "{start}"\n')
    state = tempfile.mkdtemp(prefix="takt-native-start-")
    t0 = time.monotonic()
    proc = subprocess.Popen([takt, "run", "--project", project, "--state-dir", state],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = native = None
    try:
        for line in proc.stdout:
            now = time.monotonic() - t0
            if running is None and "running " in line:
                running = now
            if "execution: native (compiled in" in line:
                native = now
            if "execution: interpreter (native:" in line:
                sys.exit(f"native-start: the tier did not compile the program: {line.strip()}")
            if (running is not None and native is not None) or now > timeout:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(state, ignore_errors=True)
        # The appended [runtime] table is taken out again for the next run.
        with open(os.path.join(project, "runtime.toml")) as f:
            text = f.read()
        with open(os.path.join(project, "runtime.toml"), "w") as f:
            f.write(text[:text.index("\n[runtime]\n")])
    return running, native


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--takt", default=os.path.join(ROOT, "build", "takt"))
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="takt-large-")
    try:
        project = os.path.join(work, "large")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-large-project.py"), project,
                        "--lines", str(args.lines)], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(project, "io.toml"), "w") as f:
            f.write('[io]\ndriver = "loopback"\n')
        built = subprocess.run([args.takt, "build", "--project", project], capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"native-start: takt build failed:\n{built.stdout}{built.stderr}")
        print(f"{args.lines} lines; load average {open('/proc/loadavg').read().split()[0]}")
        print(f"{'native_start':<14}{'first cycle s':>16}{'native s':>12}")
        for start in ("background", "wait"):
            running, native = timed_run(args.takt, project, start, args.timeout)
            fmt = lambda v: "-" if v is None else f"{v:.2f}"
            print(f"{start:<14}{fmt(running):>16}{fmt(native):>12}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
