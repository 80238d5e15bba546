// `takt dap` through the DAP client library of VS Code's own adapter tests
// (@vscode/debugadapter-testsupport), attached to a `takt run` this file starts on a Unix socket
// in a scratch folder: a program with two tasks on threads of their own, the slow one calling an
// FB three times a cycle. Each test starts its own adapter; the runtime runs throughout and every
// test leaves it scanning with no task halted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DebugClient } from '@vscode/debugadapter-testsupport';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');
const ENGINEER_TOKEN = 'engineer-dap-5c2e91a7b04d38f6';
const VIEWER_TOKEN = 'viewer-dap-8a1f37c6e29b05d4';
const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Line numbers below are those of this text (line 1 is `FUNCTION_BLOCK Accum`).
const SOURCE = `FUNCTION_BLOCK Accum
  VAR_INPUT x : DINT; END_VAR
  VAR_OUTPUT total : DINT; END_VAR
  VAR calls : DINT; END_VAR
  calls := calls + 1;
  total := total + x;
END_FUNCTION_BLOCK

PROGRAM SlowProg
  VAR acc : Accum; i : DINT; cycles : DINT; END_VAR
  FOR i := 1 TO 3 DO
    acc(x := i);
  END_FOR;
  cycles := cycles + 1;
END_PROGRAM

PROGRAM FastProg
  VAR cycles : DINT; seen : DINT; END_VAR
  cycles := cycles + 1;
  Bump(n := cycles, seen := seen);
END_PROGRAM

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#2ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#10ms, PRIORITY := 2);
    PROGRAM pFast WITH Fast : FastProg;
    PROGRAM pSlow WITH Slow : SlowProg;
  END_RESOURCE
END_CONFIGURATION

FUNCTION Bump : DINT
  VAR_INPUT n : DINT; END_VAR
  VAR_IN_OUT seen : DINT; END_VAR
  VAR twice : DINT; END_VAR
  twice := n * 2;
  seen := twice;
  Bump := twice;
END_FUNCTION
`;
const LINE_CALLS = 5;
const LINE_TOTAL = 6;
const LINE_CALL = 12;
const LINE_SEEN = 37;
const LINE_BUMP = 38;
const SLOW = 2; // the thread of task Slow
const FAST = 1; // the thread of task Fast

let dir;
let source;
let endpoint;
let child;
let log = '';

async function until(what, fn, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}\n${log}`);
}

// One control method through `takt ctl` with the engineer token: its parsed result.
async function ctl(method, params = {}, ep = endpoint) {
  const { stdout } = await run(takt, ['ctl', '--endpoint', ep, '--token-file', path.join(dir, 'engineer.token'),
    method, JSON.stringify(params)], { timeout: 20000 });
  return JSON.parse(stdout);
}

async function counter(name, ep = endpoint) {
  const r = await ctl('var.read', { names: [name] }, ep);
  return r.values[name].value;
}

// The runtime scans every task: no task halted, and the slow task's counter moves on.
async function scanning() {
  const status = await ctl('runtime.status');
  assert.equal(status.state, 'running', log);
  const first = await counter('pSlow.cycles');
  await until('the slow task to count cycles again', async () => (await counter('pSlow.cycles')) > first + 2);
  assert.deepEqual((await ctl('runtime.status')).halted, []);
}

// A `takt run` of `text` (src/main.st) in the folder `root`, serving its control endpoint on a
// Unix socket there with the tokens of `dir`; resolves once it is running.
async function startRuntime(root, text, execution = 'interpreter') {
  mkdirSync(path.join(root, 'src'), { recursive: true });
  const src = path.join(root, 'src', 'main.st');
  writeFileSync(src, text);
  const ep = `unix://${root}/takt.sock`;
  // The watchdog is on: a halted task's does not count, so the runtime stays up while halted.
  writeFileSync(path.join(root, 'runtime.toml'), `[bundle]
version = 1

[runtime]
execution = "${execution}"

[resource]
name = "dap_test"
cycle_interval_ms = 2

[runtime.control]
endpoint = "${ep}"
debug_enabled = true

[[runtime.control.tokens]]
role = "engineer"
token_file = "${path.join(dir, 'engineer.token')}"

[[runtime.control.tokens]]
role = "viewer"
token_file = "${path.join(dir, 'viewer.token')}"

[runtime.watchdog]
enabled = true
timeout_ms = 500
action = "safe_halt"
`);
  const proc = spawn(takt, ['run', '--project', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  await until(`takt run in ${root} to serve its control endpoint`, async () => {
    if (proc.exitCode !== null) throw new Error(`takt run exited ${proc.exitCode}`);
    return existsSync(path.join(root, 'takt.sock')) && (await ctl('runtime.status', {}, ep)).state === 'running';
  });
  return { proc, ep, src };
}

async function stopRuntime(proc) {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await Promise.race([exited, sleep(10000)]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
}

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'takt-dap-'));
  writeFileSync(path.join(dir, 'engineer.token'), `${ENGINEER_TOKEN}\n`, { mode: 0o600 });
  writeFileSync(path.join(dir, 'viewer.token'), `${VIEWER_TOKEN}\n`, { mode: 0o600 });
  ({ proc: child, ep: endpoint, src: source } = await startRuntime(dir, SOURCE));
});

after(async () => {
  await stopRuntime(child);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// A started adapter, initialized and attached with `token`.
async function attached(token = 'engineer.token', ep = endpoint) {
  const dc = new DebugClient(takt, 'dap', 'takt');
  dc.defaultTimeout = 10000;
  await dc.start();
  await dc.initializeRequest({ adapterID: 'takt', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
  const initialized = dc.waitForEvent('initialized');
  await dc.attachRequest({ endpoint: ep, tokenFile: path.join(dir, token) });
  await initialized;
  return dc;
}

async function breakAt(dc, ...lines) {
  return breakIn(dc, source, ...lines);
}

async function breakIn(dc, file, ...lines) {
  const r = await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
  await dc.configurationDoneRequest();
  return r.body.breakpoints;
}

async function variablesOf(dc, frameId, scopeName) {
  const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
  const scope = scopes.find((s) => s.name === scopeName);
  assert.ok(scope, `no scope ${scopeName} in ${JSON.stringify(scopes)}`);
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  return { ref: scope.variablesReference, vars, value: (name) => vars.find((v) => v.name === name)?.value };
}

// DebugClient.stop() sends `disconnect` (the adapter detaches, answers and exits), then ends the
// adapter process.
async function detach(dc) {
  await dc.stop();
}

test('a line breakpoint inside an FB called in a loop halts its task with the call chain and variables', async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    const [bp] = await breakAt(dc, LINE_CALLS - 1); // a declaration: resolved to the next statement
    assert.equal(bp.verified, true);
    assert.equal(bp.line, LINE_CALLS);
    const ev = await stopped;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.equal(ev.body.threadId, SLOW);
    const threads = (await dc.threadsRequest()).body.threads;
    assert.deepEqual(threads.map((t) => t.name), ['Fast', 'Slow']);

    const frames = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal(frames.length, 2);
    assert.equal(frames[0].name, 'Accum (pSlow.acc)');
    assert.equal(frames[0].line, LINE_CALLS);
    assert.equal(frames[0].source.path, source);
    assert.equal(frames[1].name, 'SlowProg (pSlow)');
    assert.equal(frames[1].line, LINE_CALL);

    const inputs = await variablesOf(dc, frames[0].id, 'Inputs');
    assert.equal(inputs.value('x'), '1'); // the loop's first call
    const outer = await variablesOf(dc, frames[1].id, 'Locals');
    assert.equal(outer.value('i'), '1');
    const acc = outer.vars.find((v) => v.name === 'acc');
    assert.ok(acc.variablesReference > 0, 'an FB instance expands');
    const members = (await dc.variablesRequest({ variablesReference: acc.variablesReference })).body.variables;
    assert.ok(members.some((v) => v.name === 'calls'), JSON.stringify(members));

    // The other task runs on while this one is halted.
    const fast = await counter('pFast.cycles');
    await until('the fast task to count while the slow one is halted', async () => (await counter('pFast.cycles')) > fast + 10);
    const status = await ctl('runtime.status');
    assert.deepEqual(status.halted.map((h) => [h.task, h.pou, h.line]), [['Slow', 'Accum', LINE_CALLS]]);

    // Continue: the same breakpoint, the loop's second call.
    const again = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: SLOW });
    await again;
    const frames2 = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal((await variablesOf(dc, frames2[0].id, 'Inputs')).value('x'), '2');
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('a variable set while halted is what the task runs on after continue', async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALLS);
    await stopped;
    const [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    const locals = await variablesOf(dc, top.id, 'Locals');
    const set = await dc.setVariableRequest({ variablesReference: locals.ref, name: 'calls', value: '1000' });
    assert.equal(set.body.value, '1000');
    const bad = await dc.setVariableRequest({ variablesReference: locals.ref, name: 'calls', value: 'TRUE' }).then(
      () => null, (err) => err);
    assert.ok(bad, 'a value of the wrong type is refused');
    const again = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: SLOW });
    await again; // the loop's next call, after `calls := calls + 1` ran once
    const [top2] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal((await variablesOf(dc, top2.id, 'Locals')).value('calls'), '1001');
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('evaluate: a local, a member path, arithmetic in IEC types, and a bad expression', async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALLS);
    await stopped;
    const [top, caller] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    const evaluate = async (expression, frameId = top.id, context = 'watch') =>
      (await dc.evaluateRequest({ expression, frameId, context })).body;
    const calls = Number((await variablesOf(dc, top.id, 'Locals')).value('calls'));
    assert.equal((await evaluate('calls')).result, String(calls));
    assert.equal((await evaluate('calls', top.id, 'hover')).type, 'DINT');
    assert.equal((await evaluate('acc.x', caller.id)).result, '1');
    assert.equal((await evaluate('x * 10 + calls MOD 3', top.id, 'repl')).result, String(10 + (calls % 3)));
    assert.equal((await evaluate('x = 1 AND calls > 0')).result, 'TRUE');
    const acc = await evaluate('acc', caller.id);
    assert.equal(acc.result, 'Accum');
    assert.ok(acc.variablesReference > 0, 'an FB instance expands');
    const members = (await dc.variablesRequest({ variablesReference: acc.variablesReference })).body.variables;
    assert.equal(members.find((v) => v.name === 'x')?.value, '1');
    const bad = await evaluate('x + nosuch').then(() => null, (err) => err);
    assert.ok(bad, 'a bad expression fails');
    assert.match(bad.message, /E0104 at column 5: no variable 'nosuch'/);
    const call = await evaluate('acc(x := 100)', caller.id).then(() => null, (err) => err);
    assert.match(call.message, /E0801 at column 1: .*call/);
    assert.equal((await evaluate('acc.x', caller.id)).result, '1', 'the FB was not called');
  } finally {
    await detach(dc);
  }
  await scanning();
});

test("a FUNCTION's parameters and locals are listed, evaluated and set; its VAR_IN_OUT is the caller's variable", async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_SEEN);
    await stopped;
    const [top, caller] = (await dc.stackTraceRequest({ threadId: FAST })).body.stackFrames;
    assert.equal(top.name, 'Bump');
    assert.equal(top.line, LINE_SEEN);
    assert.equal(caller.name, 'FastProg (pFast)');
    const n = Number((await variablesOf(dc, top.id, 'Inputs')).value('n'));
    assert.ok(n > 1, `n is ${n}`);
    const locals = await variablesOf(dc, top.id, 'Locals');
    assert.equal(locals.value('twice'), String(2 * n));
    const outputs = await variablesOf(dc, top.id, 'Outputs');
    assert.equal(outputs.value('seen'), String(2 * (n - 1)), "the caller's pFast.seen, from the last cycle's call");
    assert.equal(outputs.value('Bump'), '0', 'the result, not yet assigned in this call');
    const evaluate = async (expression) => (await dc.evaluateRequest({ expression, frameId: top.id, context: 'watch' })).body;
    assert.equal((await evaluate('twice - seen')).result, '2');
    assert.equal((await evaluate('n')).type, 'DINT');

    // Set value: a local of the frame, and the caller's variable through the VAR_IN_OUT.
    assert.equal((await dc.setVariableRequest({ variablesReference: locals.ref, name: 'twice', value: '7' })).body.value, '7');
    assert.equal((await dc.setVariableRequest({ variablesReference: outputs.ref, name: 'seen', value: '5' })).body.value, '5');
    assert.equal(await counter('pFast.seen'), 5);
    const bad = await dc.setVariableRequest({ variablesReference: locals.ref, name: 'twice', value: 'TRUE' }).then(
      () => null, (err) => err);
    assert.ok(bad, 'a value of the wrong type is refused');
    // Step over `seen := twice`: the call runs on with the local written.
    await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [] });
    const stepped = dc.waitForEvent('stopped');
    await dc.nextRequest({ threadId: FAST });
    await stepped;
    const [now] = (await dc.stackTraceRequest({ threadId: FAST })).body.stackFrames;
    assert.equal(now.line, LINE_BUMP);
    assert.equal(await counter('pFast.seen'), 7);
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('a hit condition halts at the Nth hit only', async () => {
  const dc = await attached();
  try {
    let stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALLS);
    await stopped; // halted before `calls := calls + 1`
    let [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    const calls = Number((await variablesOf(dc, top.id, 'Locals')).value('calls'));
    const [bp] = (await dc.setBreakpointsRequest({ source: { path: source },
      breakpoints: [{ line: LINE_CALLS, hitCondition: '5' }] })).body.breakpoints;
    assert.equal(bp.verified, true);
    stopped = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: SLOW });
    await stopped;
    [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal(Number((await variablesOf(dc, top.id, 'Locals')).value('calls')), calls + 5);
    const [bad] = (await dc.setBreakpointsRequest({ source: { path: source },
      breakpoints: [{ line: LINE_CALLS, hitCondition: 'often' }] })).body.breakpoints;
    assert.equal(bad.verified, false);
    assert.match(bad.message, /hit condition/);
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('a conditioned breakpoint halts only where its condition holds, and a bad one says why', async () => {
  const dc = await attached();
  try {
    let stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALLS);
    await stopped; // halted before `calls := calls + 1`
    let [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    const calls = Number((await variablesOf(dc, top.id, 'Locals')).value('calls'));
    // The first hit after continue where it holds: calls + 7 (the loop's x is then known too).
    const want = calls + 7;
    const [bp] = (await dc.setBreakpointsRequest({ source: { path: source },
      breakpoints: [{ line: LINE_CALLS, condition: `calls = ${want} AND x > 0` }] })).body.breakpoints;
    assert.equal(bp.verified, true, bp.message);
    stopped = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: SLOW });
    assert.equal((await stopped).body.reason, 'breakpoint');
    [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal(Number((await variablesOf(dc, top.id, 'Locals')).value('calls')), want);

    // A condition that does not compile, or is no BOOL: unverified, with the code and column.
    const [bad, notBool] = (await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [
      { line: LINE_CALLS, condition: 'calls = nosuch' }, { line: LINE_TOTAL, condition: 'calls + 1' }] })).body.breakpoints;
    assert.equal(bad.verified, false);
    assert.match(bad.message, /condition: E0104 at column 9: no variable 'nosuch'/);
    assert.equal(notBool.verified, false);
    assert.match(notBool.message, /condition: E0201 .*no BOOL/);

    // A condition that faults halts, and the stop says why.
    stopped = dc.waitForEvent('stopped');
    await dc.setBreakpointsRequest({ source: { path: source },
      breakpoints: [{ line: LINE_TOTAL, condition: 'total / (x - x) = 1' }] });
    await dc.continueRequest({ threadId: SLOW });
    const ev = await stopped;
    assert.equal(ev.body.reason, 'breakpoint');
    assert.match(ev.body.text, /the condition failed: division by zero/);
    [top] = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal(top.line, LINE_TOTAL);
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('a logpoint logs its interpolated values as output while its task keeps cycling', async () => {
  const dc = await attached();
  const outputs = [];
  let stops = 0;
  dc.on('output', (e) => outputs.push(e.body));
  dc.on('stopped', () => { ++stops; });
  try {
    const first = await counter('pSlow.cycles');
    const [bp] = (await dc.setBreakpointsRequest({ source: { path: source },
      breakpoints: [{ line: LINE_CALLS, logMessage: 'x is {x}, calls then {calls + 1}' }] })).body.breakpoints;
    assert.equal(bp.verified, true, bp.message);
    await dc.configurationDoneRequest();
    const logged = () => outputs.filter((o) => /^x is \d+, calls then \d+\n$/.test(o.output));
    await until('30 logpoint messages', async () => logged().length >= 30);
    const lines = logged().map((o) => o.output.match(/^x is (\d+), calls then (\d+)/).slice(1).map(Number));
    // x runs 1, 2, 3 every cycle; calls + 1 grows by one each message.
    for (let k = 1; k < 30; ++k) {
      assert.equal(lines[k][1], lines[k - 1][1] + 1, JSON.stringify(lines.slice(0, 30)));
      assert.equal(lines[k][0], (lines[k - 1][0] % 3) + 1, JSON.stringify(lines.slice(0, 30)));
    }
    assert.equal(logged()[0].line, LINE_CALLS);
    assert.equal(logged()[0].source.path, source);
    await until('the slow task to cycle on', async () => (await counter('pSlow.cycles')) > first + 10);
    assert.deepEqual((await ctl('runtime.status')).halted, []);
    assert.equal(stops, 0, 'a logpoint never halts');
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('step in, over and out', async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALL);
    await stopped;
    await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [] });
    const top = async () => (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;

    let next = dc.waitForEvent('stopped');
    await dc.stepInRequest({ threadId: SLOW });
    assert.equal((await next).body.reason, 'step');
    let frames = await top();
    assert.equal(frames[0].name, 'Accum (pSlow.acc)');
    assert.equal(frames[0].line, LINE_CALLS);

    next = dc.waitForEvent('stopped');
    await dc.nextRequest({ threadId: SLOW });
    await next;
    frames = await top();
    assert.equal(frames[0].line, LINE_TOTAL);

    next = dc.waitForEvent('stopped');
    await dc.stepOutRequest({ threadId: SLOW });
    await next;
    frames = await top();
    assert.equal(frames.length, 1);
    assert.equal(frames[0].name, 'SlowProg (pSlow)');
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('disconnecting while halted leaves the runtime scanning', async () => {
  const dc = await attached();
  const stopped = dc.waitForEvent('stopped');
  await breakAt(dc, LINE_TOTAL);
  await stopped;
  assert.equal((await ctl('runtime.status')).halted.length, 1);
  await detach(dc);
  await scanning();
});

test('terminate and a second attach on an attached session are refused and leave it working', async () => {
  const dc = await attached();
  try {
    await assert.rejects(dc.send('terminate', {}), /terminate: no launched runtime/);
    assert.deepEqual((await dc.threadsRequest()).body.threads.map((t) => t.name), ['Fast', 'Slow']);
    await assert.rejects(
      dc.send('attach', { endpoint, tokenFile: path.join(dir, 'engineer.token') }),
      /attach: this session has a runtime already/,
    );
    assert.deepEqual((await dc.threadsRequest()).body.threads.map((t) => t.name), ['Fast', 'Slow']);
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('a client killed while its task is halted: the task resumes', async () => {
  const dc = await attached();
  const stopped = dc.waitForEvent('stopped');
  await breakAt(dc, LINE_CALLS);
  await stopped;
  assert.equal((await ctl('runtime.status')).halted.length, 1);
  dc._adapterProcess.kill('SIGKILL'); // no disconnect: the control connection just closes
  await until('the halted task to resume', async () => (await ctl('runtime.status')).halted.length === 0);
  await scanning();
});

// The time from continue to the next `stopped` event when the breakpoint is hit again at once
// (the loop's next call, in the same cycle): what the runtime's and the adapter's polling add to
// a halt being seen. Printed for docs/performance.md; bounded so that a lost event fails.
test('a halt is told to the client within a bounded time', async () => {
  const dc = await attached();
  const times = [];
  try {
    let stopped = dc.waitForEvent('stopped');
    await breakAt(dc, LINE_CALLS);
    await stopped;
    for (let i = 0; i < 20; ++i) {
      stopped = dc.waitForEvent('stopped');
      const t0 = process.hrtime.bigint();
      await dc.continueRequest({ threadId: SLOW });
      await stopped;
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    await detach(dc);
  }
  times.sort((a, b) => a - b);
  console.log(`continue to stopped, 20 halts: p50 ${times[10].toFixed(1)} ms, max ${times[19].toFixed(1)} ms`);
  assert.ok(times[19] < 2000, `a halt took ${times[19]} ms to reach the client`);
  await scanning();
});

test('a viewer cannot set breakpoints', async () => {
  const dc = await attached('viewer.token');
  try {
    const err = await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line: LINE_CALLS }] }).then(
      () => null, (e) => e);
    assert.ok(err, 'refused');
    assert.match(err.message, /forbidden/);
  } finally {
    await detach(dc);
  }
  assert.deepEqual((await ctl('runtime.status')).halted, []);
});

// A program with one task (here without a CONFIGURATION) runs on the base cycle, which also
// exchanges the I/O and applies the control commands: a breakpoint halts that whole cycle, the
// control endpoint still answers var.read meanwhile, and stepping works as on a task thread.
const ONE_TASK = `FUNCTION_BLOCK Count
  VAR_OUTPUT n : DINT; END_VAR
  n := n + 1;
END_FUNCTION_BLOCK

PROGRAM Main
VAR cnt : DINT; c : Count; seen : DINT; END_VAR
cnt := cnt + 1;
c();
seen := c.n;
END_PROGRAM
`;
const ONE_N = 3;
const ONE_CNT = 8;
const ONE_CALL = 9;
const ONE_SEEN = 10;

test('a one-task program: a breakpoint halts the base cycle, which still answers var.read; disconnect resumes it', async () => {
  const one = await startRuntime(path.join(dir, 'one'), ONE_TASK);
  try {
    const dc = await attached('engineer.token', one.ep);
    try {
      const stopped = dc.waitForEvent('stopped');
      const [bp] = await breakIn(dc, one.src, ONE_CNT);
      assert.equal(bp.verified, true, JSON.stringify(bp));
      const ev = await stopped;
      assert.equal(ev.body.reason, 'breakpoint');
      const threadId = ev.body.threadId;
      assert.deepEqual((await dc.threadsRequest()).body.threads.map((t) => t.name), ['base cycle']);
      const top = async () => (await dc.stackTraceRequest({ threadId })).body.stackFrames;
      let frames = await top();
      assert.equal(frames[0].name, 'Main (Main)');
      assert.equal(frames[0].line, ONE_CNT);
      const cnt = Number((await variablesOf(dc, frames[0].id, 'Locals')).value('cnt'));

      // Halted beyond the 500 ms watchdog: the endpoint answers, the cycle stands still.
      await sleep(700);
      assert.equal(await counter('Main.cnt', one.ep), cnt);
      const status = await ctl('runtime.status', {}, one.ep);
      assert.equal(status.state, 'running', log);
      assert.deepEqual(status.halted.map((h) => [h.task, h.pou, h.line]), [['base cycle', 'Main', ONE_CNT]]);

      let next = dc.waitForEvent('stopped');
      await dc.nextRequest({ threadId });
      await next;
      assert.equal((await top())[0].line, ONE_CALL);
      next = dc.waitForEvent('stopped');
      await dc.stepInRequest({ threadId });
      await next;
      frames = await top();
      assert.equal(frames[0].name, 'Count (Main.c)');
      assert.equal(frames[0].line, ONE_N);
      next = dc.waitForEvent('stopped');
      await dc.stepOutRequest({ threadId });
      await next;
      frames = await top();
      assert.equal(frames.length, 1);
      assert.equal(frames[0].line, ONE_SEEN);

      // Continue: the next cycle halts at the breakpoint again, one count on. Timed from sending
      // `continue` to the `stopped` of the next cycle (2 ms away), for docs/performance.md.
      const times = [];
      for (let i = 1; i <= 10; ++i) {
        const again = dc.waitForEvent('stopped');
        const t0 = process.hrtime.bigint();
        await dc.continueRequest({ threadId });
        await again;
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        assert.equal(await counter('Main.cnt', one.ep), cnt + i);
      }
      times.sort((a, b) => a - b);
      console.log(`base cycle, continue to stopped, 10 halts: p50 ${times[5].toFixed(1)} ms, max ${times[9].toFixed(1)} ms`);
    } finally {
      await detach(dc);
    }
    const after = await counter('Main.cnt', one.ep);
    await until('the base cycle to count again', async () => (await counter('Main.cnt', one.ep)) > after + 2);
    assert.deepEqual((await ctl('runtime.status', {}, one.ep)).halted, []);
  } finally {
    await stopRuntime(one.proc);
  }
});

test('a function breakpoint on an FB called in a loop halts at its first statement, with its condition and hit count', async () => {
  const dc = await attached();
  try {
    const stopped = dc.waitForEvent('stopped');
    const cycles = await counter('pSlow.cycles');
    const r = await dc.setFunctionBreakpointsRequest({ breakpoints: [
      { name: 'accum', condition: 'x = 2', hitCondition: '2' }, { name: 'NoSuch' }] });
    await dc.configurationDoneRequest();
    const [bp, unknown] = r.body.breakpoints;
    assert.equal(bp.verified, true, bp.message);
    assert.equal(bp.line, LINE_CALLS);
    assert.match(bp.source.path, /src\/main\.st$/);
    assert.equal(unknown.verified, false);
    assert.match(unknown.message, /no POU named 'NoSuch'/);
    const ev = await stopped;
    assert.equal(ev.body.reason, 'function breakpoint');
    assert.equal(ev.body.threadId, SLOW);
    const frames = (await dc.stackTraceRequest({ threadId: SLOW })).body.stackFrames;
    assert.equal(frames[0].name, 'Accum (pSlow.acc)');
    assert.equal(frames[0].line, LINE_CALLS);
    assert.equal(frames[1].name, 'SlowProg (pSlow)');
    assert.equal((await variablesOf(dc, frames[0].id, 'Inputs')).value('x'), '2', 'the condition holds');
    // The second hit where x = 2: a cycle after the first one that passed the call with x = 2.
    assert.ok(Number((await variablesOf(dc, frames[1].id, 'Locals')).value('cycles')) >= cycles + 1);
    await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  } finally {
    await detach(dc);
  }
  await scanning();
});

// One program on the base cycle that divides by `d` once `armed`.
const DIVIDE = `PROGRAM Main
VAR d : DINT; armed : BOOL; q : DINT; runs : DINT; END_VAR
runs := runs + 1;
IF armed THEN
  q := 100 / d;
END_IF;
END_PROGRAM
`;
const DIVIDE_LINE = 5;

test('an exception breakpoint halts at a division by zero before the fault policy; a fixed divisor runs on', async () => {
  const div = await startRuntime(path.join(dir, 'divide'), DIVIDE);
  try {
    const dc = new DebugClient(takt, 'dap', 'takt');
    dc.defaultTimeout = 10000;
    await dc.start();
    try {
      const init = await dc.initializeRequest({ adapterID: 'takt', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      assert.equal(init.body.supportsFunctionBreakpoints, true);
      assert.equal(init.body.supportsExceptionInfoRequest, true);
      const filters = init.body.exceptionBreakpointFilters.map((f) => f.filter);
      for (const f of ['divide_by_zero', 'bounds', 'all']) assert.ok(filters.includes(f), JSON.stringify(filters));
      const initialized = dc.waitForEvent('initialized');
      await dc.attachRequest({ endpoint: div.ep, tokenFile: path.join(dir, 'engineer.token') });
      await initialized;
      const set = await dc.setExceptionBreakpointsRequest({ filters: ['divide_by_zero'] });
      assert.equal(set.body.breakpoints[0].verified, true);
      await dc.configurationDoneRequest();

      const stopped = dc.waitForEvent('stopped');
      await ctl('var.write', { name: 'Main.armed', value: 'TRUE' }, div.ep);
      const ev = await stopped;
      assert.equal(ev.body.reason, 'exception');
      assert.match(ev.body.text, /division/);
      const threadId = ev.body.threadId;
      const info = (await dc.exceptionInfoRequest({ threadId })).body;
      assert.equal(info.exceptionId, 'divide_by_zero');
      assert.match(info.description, /division or MOD by zero/);
      const [top] = (await dc.stackTraceRequest({ threadId })).body.stackFrames;
      assert.equal(top.line, DIVIDE_LINE);
      assert.equal((await ctl('runtime.status', {}, div.ep)).faults, 0, 'the fault policy has not acted');

      const locals = await variablesOf(dc, top.id, 'Locals');
      assert.equal(locals.value('d'), '0');
      await dc.setVariableRequest({ variablesReference: locals.ref, name: 'd', value: '4' });
      const runs = await counter('Main.runs', div.ep);
      await dc.continueRequest({ threadId });
      await until('the program to run on', async () => (await counter('Main.runs', div.ep)) > runs + 5);
      assert.equal(await counter('Main.q', div.ep), 25);
      const status = await ctl('runtime.status', {}, div.ep);
      assert.equal(status.state, 'running');
      assert.equal(status.faults, 0);
      assert.deepEqual(status.halted, []);
    } finally {
      await detach(dc);
    }
  } finally {
    await stopRuntime(div.proc);
  }
});

// The native tier runs compiled code, which cannot halt: while the session holds a breakpoint or
// an exception filter the program runs on the interpreter, on the same image, and native again
// once the session has gone.
test('flow control: what each line of an FB read and wrote the last time its task ran it, while the program runs', async () => {
  const dc = await attached();
  try {
    await assert.rejects(dc.customRequest('flowControl', { source: { path: source }, line: 999 }),
      /no statement at or after line 999/);
    const on = (await dc.customRequest('flowControl', { source: { path: source }, line: LINE_TOTAL })).body;
    assert.equal(on.pou, 'Accum');
    assert.deepEqual(on.lines, [LINE_CALLS, LINE_TOTAL]);
    assert.equal(on.source.path, source);
    const flow = await until('a record of the FB', async () => {
      const b = (await dc.customRequest('flowValues')).body;
      return b.run > 0 && b;
    });
    assert.equal(flow.task, 'Slow');
    assert.deepEqual(flow.lines.map((l) => [l.line, l.count, l.source.path]),
      [[LINE_CALLS, 3, source], [LINE_TOTAL, 3, source]]);
    const value = (line, name, access) => {
      const v = flow.lines.find((l) => l.line === line).values.find((x) => x.name === name && x.access === access);
      assert.ok(v, `line ${line} has no ${access} of ${name}: ${JSON.stringify(flow.lines)}`);
      return Number(v.value);
    };
    // The third call of the cycle: x = 3, and each write is what the line computed from its reads.
    assert.equal(value(LINE_TOTAL, 'x', 'read'), 3);
    assert.equal(value(LINE_TOTAL, 'total', 'write'), value(LINE_TOTAL, 'total', 'read') + 3);
    assert.equal(value(LINE_CALLS, 'calls', 'write'), value(LINE_CALLS, 'calls', 'read') + 1);
    // Off: the runtime says so, and it scans as before.
    assert.equal((await dc.customRequest('flowControl', {})).body.pou, null);
    await assert.rejects(dc.customRequest('flowValues'), /no flow control is on/);
  } finally {
    await detach(dc);
  }
  await scanning();
});

test('on the native tier breakpoints verify and halt; the program runs native again after detach', async (t) => {
  const nat = await startRuntime(path.join(dir, 'native'), DIVIDE, 'native');
  try {
    // The program starts on the interpreter while its code compiles in the background.
    await until('the native compile to end', async () =>
      (await ctl('runtime.status', {}, nat.ep)).execution !== 'interpreter (native compiling)');
    if ((await ctl('runtime.status', {}, nat.ep)).execution !== 'native') {
      t.skip('the native tier is not built into this takt');
      return;
    }
    const dc = await attached('engineer.token', nat.ep);
    try {
      // A condition that never holds: verified, but it does not halt the program here.
      const [fn] = (await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'Main', condition: 'runs < 0' }] }))
        .body.breakpoints;
      assert.equal(fn.verified, true, fn.message);
      await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
      const [ex] = (await dc.setExceptionBreakpointsRequest({ filters: ['divide_by_zero'] })).body.breakpoints;
      assert.equal(ex.verified, true, ex.message);
      assert.equal((await ctl('runtime.status', {}, nat.ep)).execution, 'native (interpreter while debugging)');
      // Flow control records on the interpreter the session puts the program on.
      await dc.customRequest('flowControl', { pou: 'Main' });
      const flow = await until('flow control values on the native tier', async () => {
        const b = (await dc.customRequest('flowValues')).body;
        return b.run > 0 && b;
      });
      assert.ok(flow.lines.some((l) => l.values.some((v) => v.name === 'runs' && v.access === 'write')),
        JSON.stringify(flow.lines));
      await dc.customRequest('flowControl', {});
      const stopped = dc.waitForEvent('stopped');
      await ctl('var.write', { name: 'Main.armed', value: 'TRUE' }, nat.ep);
      const ev = await stopped;
      assert.equal(ev.body.reason, 'exception');
      const threadId = ev.body.threadId;
      const [top] = (await dc.stackTraceRequest({ threadId })).body.stackFrames;
      assert.equal(top.line, DIVIDE_LINE);
      assert.equal((await ctl('runtime.status', {}, nat.ep)).faults, 0, 'the fault policy has not acted');
      const locals = await variablesOf(dc, top.id, 'Locals');
      await dc.setVariableRequest({ variablesReference: locals.ref, name: 'd', value: '4' });
      await dc.continueRequest({ threadId });
    } finally {
      await detach(dc);
    }
    await until('the program to run native again', async () =>
      (await ctl('runtime.status', {}, nat.ep)).execution === 'native');
    const runs = await counter('Main.runs', nat.ep);
    await until('the program to run on', async () => (await counter('Main.runs', nat.ep)) > runs + 5);
    assert.equal(await counter('Main.q', nat.ep), 25);
    assert.equal((await ctl('runtime.status', {}, nat.ep)).faults, 0);
  } finally {
    await stopRuntime(nat.proc);
  }
});
