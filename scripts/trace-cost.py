#!/usr/bin/env python3
"""What a trace and an attached debugger cost the demo's cycles, side by side in one run.

Usage: TAKT_BIN=build-rel/takt scripts/trace-cost.py [--pairs 3] [--seconds 10]

Starts `takt run` on a copy of examples/demo (simulated plant, FastTask 10 ms, SlowTask 50 ms,
each on a thread of its own) with a Unix control endpoint and debug_enabled, then alternates
windows: none, trace, trace, none, attached, attached, none, condition, condition, none, ... In
a `trace` window a trace of 32 variables of the FastTask's program samples every FastTask cycle;
in an `attached` window a debugging session holds a breakpoint on a statement the running line
never reaches (`Step := StepFault;`, the fill watchdog's), so the task runs on the interpreter's
debug loop and never halts; in a `condition` window the breakpoint is on the first statement of
the FastTask's program with the condition FALSE, evaluated every cycle, never halting. Each window samples the FastTask's `last_exec_us` (runtime.stats) every
20 ms and prints one JSON line: the median and mean execution time of the window; the summary
gives each kind's median over the runs of "none". Figures: docs/performance.md "Traces".
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Endpoint:
    """One JSON-RPC connection to the control endpoint (newline-delimited)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.next = 1

    def call(self, method, params=None):
        self.next += 1
        msg = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params or {}}
        self.sock.sendall((json.dumps(msg) + "\n").encode())
        while True:
            while b"\n" not in self.buf:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("the endpoint closed the connection")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def close(self):
        self.sock.close()


def fast_exec_us(ep):
    for t in ep.call("runtime.stats")["tasks"]:
        if t["name"].lower() == "fasttask":
            return t["last_exec_us"]
    raise RuntimeError("no FastTask in runtime.stats")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    takt = os.environ.get("TAKT_BIN", os.path.join(ROOT, "build-rel", "takt"))
    work = tempfile.mkdtemp(prefix="takt-trace-cost-")
    proj = os.path.join(work, "demo")
    shutil.copytree(os.path.join(ROOT, "examples", "demo"), proj)
    sock = os.path.join(work, "ctl.sock")
    toml_path = os.path.join(proj, "runtime.toml")
    with open(toml_path) as f:
        toml = f.read()
    lines = []
    for line in toml.splitlines():
        if line.strip().startswith("endpoint"):
            line = f'endpoint = "unix://{sock}"'
        lines.append(line)
    toml = "\n".join(lines) + "\n"
    if "debug_enabled" not in toml:
        toml = toml.replace("[runtime.control]\n", "[runtime.control]\ndebug_enabled = true\n", 1)
    with open(toml_path, "w") as f:
        f.write(toml)
    log = open(os.path.join(work, "run.log"), "w")
    proc = subprocess.Popen([takt, "run", "--project", proj], stdout=log, stderr=log)
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        ep = Endpoint(sock)
        time.sleep(2)  # settled
        variables = [v["path"] for v in ep.call("var.list", {"pattern": "Line.*", "limit": 1000})["variables"]
                     if v["type"] in ("BOOL", "INT", "DINT", "UDINT", "REAL", "LREAL", "TIME", "UINT", "E_FillStep",
                                      "T_Percent", "WORD", "BYTE")][:32]
        first_line = None
        fault_line = None
        with open(os.path.join(proj, "src", "filling_line.st")) as f:
            for n, text in enumerate(f, 1):
                if text.strip().startswith("StartEdge(") and first_line is None:
                    first_line = n
                if text.strip() == "Step := StepFault;" and fault_line is None:
                    fault_line = n
        kinds = []
        for _ in range(args.pairs):
            kinds += ["none", "trace", "trace", "none", "attached", "attached", "none", "condition", "condition"]
        kinds.append("none")
        results = []
        for kind in kinds:
            trace_id = None
            debugger = None
            if kind == "trace":
                trace_id = ep.call("trace.start", {"variables": variables, "task": "FastTask",
                                                   "post": 100000})["id"]
            elif kind in ("attached", "condition"):
                bp = {"line": first_line, "condition": "FALSE"} if kind == "condition" else {"line": fault_line}
                debugger = Endpoint(sock)
                answer = debugger.call("debug.setBreakpoints", {"file": "src/filling_line.st", "breakpoints": [bp]})
                if not answer["breakpoints"][0]["verified"]:
                    raise RuntimeError(f"breakpoint not set: {answer}")
            time.sleep(0.5)
            samples = []
            end = time.time() + args.seconds
            while time.time() < end:
                v = fast_exec_us(ep)
                if v is not None:
                    samples.append(v)
                time.sleep(0.02)
            if trace_id is not None:
                ep.call("trace.remove", {"id": trace_id})
            halted = debugger is not None and any(t.get("halted") for t in debugger.call("debug.threads")["threads"])
            if debugger is not None:
                debugger.call("debug.detach")
                debugger.close()
            if halted:
                raise RuntimeError(f"a task halted in the {kind} window: the breakpoint was reached")
            row = {"kind": kind, "variables": len(variables) if kind == "trace" else 0,
                   "samples": len(samples), "exec_median_us": round(statistics.median(samples), 2),
                   "exec_mean_us": round(statistics.mean(samples), 2), "load_average": os.getloadavg()[0]}
            results.append(row)
            print(json.dumps(row), flush=True)
        none = statistics.median(r["exec_median_us"] for r in results if r["kind"] == "none")
        for kind in ("trace", "attached", "condition"):
            m = statistics.median(r["exec_median_us"] for r in results if r["kind"] == kind)
            print(json.dumps({"summary": kind, "median_us": m, "none_median_us": none, "ratio": round(m / none, 3)}))
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
