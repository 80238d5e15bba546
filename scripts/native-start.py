#!/usr/bin/env python3
"""How soon a large program runs on the native tier (docs/performance.md): a generated project
(scripts/gen-large-project.py, default 50,000 lines) built once, then `takt run --execution native`
with [runtime] native_start = "background" and "wait", timing from the process start to the log's
`running` line (the scan loop started: the first cycle follows within one period), to the first
`runtime.status` (polled with `takt ctl` in the "background" run) saying part of the program runs
native ("interpreter (native compiling, N of M POUs native)": the first wave of POUs taken) and
to its `execution: native (compiled in …)` line. Then, in the "wait" run, two online changes of the
first station FB, one after the other (CHANGES: a comparison changed, a variable added):
`takt reload --yes --json`, its wall-clock time and what its answer reports of the compile (time,
POUs compiled and reused). One run of each,
printed as a table; wall clock, so read it beside the machine's load (printed). TAKT_NATIVE_THREADS=N
in the environment compiles on N threads (default: one per CPU), for figures side by side.

    python3 scripts/native-start.py [--takt build/takt] [--lines 50000] [--timeout 600]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The online changes sent one after the other once the program runs native: a label and the edit
# of src/cell000.st (the first cell's stations). A changed comparison changes one FB's code; a
# variable added to that FB changes the layout of its instances too, so what follows them in the
# image moves. Either way only that FB is compiled again: bodies address instances through `this`.
CHANGES = [
    ("a comparison in one FB", lambda text: text.replace("IF Blocked > 4 THEN", "IF Blocked > 5 THEN", 1)),
    ("a variable added to one FB", lambda text: text.replace("    i, j, Swap, Blocked : INT;",
                                                              "    i, j, Swap, Blocked : INT;\n    Added : INT;", 1)),
]


def reload_one_pou(takt, project, edit):
    """An online change of the first station FB (`edit` of its source): seconds of `takt reload`,
    and its answer (both None when the program is too large to send)."""
    source = os.path.join(project, "src", "cell000.st")
    with open(source) as f:
        text = f.read()
    changed = edit(text)
    if changed == text:
        sys.exit("native-start: the edit did not apply to src/cell000.st")
    with open(source, "w") as f:
        f.write(changed)
    t0 = time.monotonic()
    done = subprocess.run([takt, "reload", "--project", project, "--yes", "--json", "--timeout-ms", "600000"],
                          capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if done.returncode != 0 and "request line exceeds" in done.stdout + done.stderr:
        return None, None  # the program's bytecode does not fit the control endpoint's request line
    if done.returncode != 0:
        sys.exit(f"native-start: takt reload failed:\n{done.stdout}{done.stderr}")
    return seconds, json.loads(done.stdout)


def first_part(takt, endpoint, t0, until, seen):
    """Polls runtime.status every 50 ms until it says part of the program runs native (its
    seconds since t0 go into seen["part"], with the status) or `until` is set."""
    while not until.is_set():
        done = subprocess.run([takt, "ctl", "--endpoint", endpoint, "runtime.status"], capture_output=True, text=True)
        if done.returncode == 0:
            execution = json.loads(done.stdout).get("execution", "")
            if "POUs native)" in execution or execution == "native":
                seen["part"] = (time.monotonic() - t0, execution)
                return
        until.wait(0.05)


def timed_run(takt, project, start, timeout, reload=False):
    """Seconds to the `running` line, to the first part running native (the "background" run
    only) and to the native line (None when not seen), and with `reload` what reload_one_pou()
    measured of each of CHANGES once the program runs native."""
    state = tempfile.mkdtemp(prefix="takt-native-start-")
    with open(os.path.join(project, "runtime.toml"), "a") as f:
        f.write(f'\n[runtime]\nexecution = "native"\nnative_start = "{start}"\n'
                f'\n[runtime.control]\nendpoint = "unix://{state}/takt.sock"\n')
    t0 = time.monotonic()
    proc = subprocess.Popen([takt, "run", "--project", project, "--state-dir", state],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    running = native = changed = None
    seen = {}
    until = threading.Event()
    poller = None
    try:
        for line in proc.stdout:
            now = time.monotonic() - t0
            if running is None and "running " in line:
                running = now
                if start == "background":
                    poller = threading.Thread(target=first_part,
                                              args=(takt, f"unix://{state}/takt.sock", t0, until, seen))
                    poller.start()
            if "execution: native (compiled in" in line:
                native = now
            if "execution: interpreter (native:" in line:
                sys.exit(f"native-start: the tier did not compile the program: {line.strip()}")
            if (running is not None and native is not None) or now > timeout:
                break
        if reload and native is not None:
            changed = [(label, *reload_one_pou(takt, project, edit)) for label, edit in CHANGES]
    finally:
        until.set()
        if poller is not None:
            poller.join(timeout=60)
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(state, ignore_errors=True)
        # The appended [runtime] table is taken out again for the next run.
        with open(os.path.join(project, "runtime.toml")) as f:
            text = f.read()
        with open(os.path.join(project, "runtime.toml"), "w") as f:
            f.write(text[:text.index("\n[runtime]\n")])
    return running, seen.get("part"), native, changed


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
        print(f"{'native_start':<14}{'first cycle s':>16}{'first POUs native s':>22}{'native s':>12}")
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        changed = None
        parts = None
        for start in ("background", "wait"):
            running, part, native, changed = timed_run(args.takt, project, start, args.timeout,
                                                       reload=start == "wait")
            print(f"{start:<14}{fmt(running):>16}{fmt(part[0] if part else None):>22}{fmt(native):>12}")
            parts = part if start == "background" else parts
        if parts is not None:
            print(f"first status with native POUs: {parts[1]}")
        for label, seconds, answer in changed or []:
            if seconds is None:
                print(f"online change, {label}: not measured (program.stbc over the control endpoint's request line)")
            else:
                print(f"online change, {label}: takt reload {seconds:.2f} s, native_compile_ms "
                      f"{answer['native_compile_ms']:.1f}, POUs compiled {answer['native_pous_compiled']}, "
                      f"reused {answer['native_pous_reused']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
