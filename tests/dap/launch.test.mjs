// `takt dap` launch through the DAP client of VS Code's adapter tests: the adapter starts a
// project (a runtime.toml without [runtime.control], written to a scratch folder) as `takt run`
// on a private endpoint with debugging on. The tests check that the session debugs it as an attach
// does, that the launched runtime never outlives the session (disconnect, terminate, the
// adapter's input closing, the adapter killed), that a runtime killed from outside ends the
// session with its exit code, that a runtime.toml with control tokens and debugging off is
// debugged as it is, and that a project that does not build fails the launch with the file and
// line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DebugClient } from '@vscode/debugadapter-testsupport';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Line numbers below are those of this text.
const SOURCE = `PROGRAM Counter
  VAR count : DINT; step : DINT := 2; END_VAR
  count := count + step;
END_PROGRAM

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Main (INTERVAL := T#5ms, PRIORITY := 1);
    PROGRAM pMain WITH Main : Counter;
  END_RESOURCE
END_CONFIGURATION
`;
const LINE_COUNT = 3;
// A type error on line 3: the build's diagnostic names src/main.st:3.
const BROKEN = `PROGRAM Broken
  VAR flag : BOOL; END_VAR
  flag := 42 + ;
END_PROGRAM
`;

// Code that runs in the first cycle only: line 4 is never reached again.
const ONCE = `PROGRAM Once
  VAR first : BOOL := TRUE; seen : DINT; cycles : DINT; END_VAR
  IF first THEN
    seen := 42;
    first := FALSE;
  END_IF;
  cycles := cycles + 1;
END_PROGRAM

CONFIGURATION Cell
  RESOURCE Cpu ON PLC
    TASK Main (INTERVAL := T#5ms, PRIORITY := 1);
    PROGRAM pOnce WITH Main : Once;
  END_RESOURCE
END_CONFIGURATION
`;
const LINE_ONCE = 4;

let dir;

function project(name, text, execution = 'interpreter', more = '') {
  const root = path.join(dir, name);
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(root, 'src', 'main.st'), text);
  writeFileSync(path.join(root, 'runtime.toml'), `[bundle]
version = 1

[runtime]
execution = "${execution}"

[resource]
name = "dap_launch"
cycle_interval_ms = 5
${more}`);
  return root;
}

// The pids of the processes whose command line names `text` (a project's unique folder).
function processesNaming(text) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(text)) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

// Whether `pid` runs: a zombie (ended, not yet reaped by whoever inherited it) does not.
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what, fn, timeoutMs = 15000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// No process is left that runs the project in `root` (takt run's command line names it).
async function noneLeft(root) {
  await until(`no process left running ${root}`, () => processesNaming(root).length === 0);
}

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'takt-dap-launch-'));
});

after(() => {
  for (const pid of processesNaming(dir)) process.kill(pid, 'SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// A started adapter, initialized and launched on `root`: the client, the launched runtime's pid
// and the output events seen so far (and later).
async function launched(root, extra = {}) {
  const dc = new DebugClient(takt, 'dap', 'takt');
  dc.defaultTimeout = 60000; // a native launch on a loaded machine: the adapter itself waits up to 60 s
  const output = [];
  dc.on('output', (e) => output.push(e.body));
  await dc.start();
  const caps = (await dc.initializeRequest({ adapterID: 'takt', linesStartAt1: true, columnsStartAt1: true,
    pathFormat: 'path' })).body;
  const initialized = dc.waitForEvent('initialized');
  const proc = dc.waitForEvent('process');
  await dc.launchRequest({ project: root, ...extra });
  await initialized;
  const pid = (await proc).body.systemProcessId;
  assert.ok(Number.isInteger(pid) && alive(pid), `the launched runtime's pid ${pid} runs`);
  return { dc, pid, output, caps };
}

test('launch: a line breakpoint halts the project, its variables read, continue, disconnect stops the runtime', async () => {
  const root = project('counter', SOURCE);
  const source = path.join(root, 'src', 'main.st');
  const { dc, pid, output, caps } = await launched(root);
  try {
    assert.equal(caps.supportsTerminateRequest, true);
    const stopped = dc.waitForEvent('stopped');
    const r = await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line: LINE_COUNT }] });
    assert.equal(r.body.breakpoints[0].verified, true);
    await dc.configurationDoneRequest();
    const ev = await stopped;
    assert.equal(ev.body.reason, 'breakpoint');
    const [top] = (await dc.stackTraceRequest({ threadId: ev.body.threadId })).body.stackFrames;
    assert.equal(top.line, LINE_COUNT);
    assert.equal(top.source.path, source);
    const scope = (await dc.scopesRequest({ frameId: top.id })).body.scopes.find((s) => s.name === 'Locals');
    const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
    assert.equal(vars.find((v) => v.name === 'step')?.value, '2');
    const before = Number(vars.find((v) => v.name === 'count')?.value);
    const again = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: ev.body.threadId });
    await again;
    const [next] = (await dc.stackTraceRequest({ threadId: ev.body.threadId })).body.stackFrames;
    const scope2 = (await dc.scopesRequest({ frameId: next.id })).body.scopes.find((s) => s.name === 'Locals');
    const vars2 = (await dc.variablesRequest({ variablesReference: scope2.variablesReference })).body.variables;
    assert.equal(Number(vars2.find((v) => v.name === 'count')?.value), before + 2, 'one cycle ran');
    // The runtime's log comes to the client as stderr output.
    assert.ok(output.some((o) => o.category === 'stderr' && /running dap_launch/.test(o.output)), JSON.stringify(output));
  } finally {
    await dc.disconnectRequest({});
    dc.stopAdapter();
  }
  assert.equal(alive(pid), false, 'disconnect answered after the launched runtime ended');
  await noneLeft(root);
});

// A launched program waits before its first cycle until configurationDone, so a breakpoint the
// client sets before then halts code that runs in the first cycle only.
test('launch: a breakpoint in code of the first cycle only halts it', async () => {
  const root = project('once', ONCE);
  const source = path.join(root, 'src', 'main.st');
  const { dc } = await launched(root);
  try {
    await sleep(300); // 60 cycles of 5 ms, had the program not waited
    const stopped = dc.waitForEvent('stopped');
    const r = await dc.setBreakpointsRequest({ source: { path: source }, breakpoints: [{ line: LINE_ONCE }] });
    assert.equal(r.body.breakpoints[0].verified, true);
    await dc.configurationDoneRequest();
    const ev = await stopped;
    assert.equal(ev.body.reason, 'breakpoint');
    const [top] = (await dc.stackTraceRequest({ threadId: ev.body.threadId })).body.stackFrames;
    assert.equal(top.line, LINE_ONCE);
    const scope = (await dc.scopesRequest({ frameId: top.id })).body.scopes.find((s) => s.name === 'Locals');
    const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
    assert.equal(vars.find((v) => v.name === 'cycles')?.value, '0', 'halted in the first cycle');
    assert.equal(vars.find((v) => v.name === 'seen')?.value, '0');
  } finally {
    await dc.disconnectRequest({});
    dc.stopAdapter();
  }
  await noneLeft(root);
});

test('launch of a project that does not build fails with the file and line, and leaves nothing running', async () => {
  const root = project('broken', BROKEN);
  const dc = new DebugClient(takt, 'dap', 'takt');
  dc.defaultTimeout = 60000; // a native launch on a loaded machine: the adapter itself waits up to 60 s
  await dc.start();
  try {
    await dc.initializeRequest({ adapterID: 'takt' });
    const err = await dc.launchRequest({ project: root }).then(() => null, (e) => e);
    assert.ok(err, 'the launch fails');
    assert.match(err.message, new RegExp(`takt run --project ${root} ended with exit code \\d+`));
    assert.match(err.message, /main\.st:3:\d+/);
    assert.deepEqual(processesNaming(root), []);
    const missing = await dc.launchRequest({ project: path.join(dir, 'nosuch') }).then(() => null, (e) => e);
    assert.match(missing.message, /project '.*nosuch' is not a directory/);
    const execution = await dc.launchRequest({ project: root, execution: 'jit' }).then(() => null, (e) => e);
    assert.match(execution.message, /execution 'jit'/);
  } finally {
    await dc.stop();
  }
  await noneLeft(root);
});

test('stopOnEntry halts the task once the configuration is done; a runtime killed from outside then ends the session with its exit code', async () => {
  const root = project('killed', SOURCE);
  const { dc, pid } = await launched(root, { stopOnEntry: true });
  try {
    const stopped = dc.waitForEvent('stopped');
    await dc.configurationDoneRequest();
    const entry = await stopped;
    assert.equal(entry.body.reason, 'entry');
    const [top] = (await dc.stackTraceRequest({ threadId: entry.body.threadId })).body.stackFrames;
    assert.equal(top.line, LINE_COUNT);
    const exited = dc.waitForEvent('exited');
    const terminated = dc.waitForEvent('terminated');
    process.kill(pid, 'SIGKILL');
    assert.equal((await exited).body.exitCode, 128 + 9);
    await terminated;
  } finally {
    await dc.stop();
  }
  await noneLeft(root);
});

test('a project whose endpoint has tokens (a viewer only, debugging off) is debugged through the session\'s own token', async () => {
  const root = project('tokens', SOURCE, 'interpreter', `
[runtime.control]
endpoint = "tcp://127.0.0.1:1"
debug_enabled = false

[[runtime.control.tokens]]
role = "viewer"
token_file = "viewer.token"
`);
  writeFileSync(path.join(root, 'viewer.token'), 'viewer-launch-7d3a90c1e5b24f68\n', { mode: 0o600 });
  const { dc, pid } = await launched(root);
  try {
    const stopped = dc.waitForEvent('stopped');
    const r = await dc.setBreakpointsRequest({ source: { path: path.join(root, 'src', 'main.st') },
      breakpoints: [{ line: LINE_COUNT }] });
    assert.equal(r.body.breakpoints[0].verified, true, 'an engineer may set breakpoints');
    await dc.configurationDoneRequest();
    assert.equal((await stopped).body.reason, 'breakpoint');
  } finally {
    await dc.disconnectRequest({});
    dc.stopAdapter();
  }
  assert.equal(alive(pid), false);
  assert.match(readFileSync(path.join(root, 'runtime.toml'), 'utf8'), /debug_enabled = false/, 'runtime.toml as it was');
  await noneLeft(root);
});

test('launch with execution native; terminate stops the runtime cleanly (exit code 0) and tells the client', async () => {
  const root = project('terminate', SOURCE, 'interpreter');
  const { dc, pid, output } = await launched(root, { execution: 'native' });
  try {
    await dc.configurationDoneRequest();
    // takt run says which tier runs a native execution (or why it fell back); the interpreter's
    // runs say nothing.
    assert.ok(output.some((o) => /execution: /.test(o.output)), JSON.stringify(output));
    const exited = dc.waitForEvent('exited');
    const terminated = dc.waitForEvent('terminated');
    await dc.send('terminate', {});
    assert.equal((await exited).body.exitCode, 0);
    await terminated;
    assert.equal(alive(pid), false);
  } finally {
    await dc.stop();
  }
  await noneLeft(root);
});

// A bare adapter process (no client library), for the ways a session ends without disconnect.
function frame(seq, command, args) {
  const body = JSON.stringify({ seq, type: 'request', command, arguments: args });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

async function bareLaunch(root) {
  const adapter = spawn(takt, ['dap'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let text = '';
  adapter.stdout.on('data', (d) => { text += d; });
  adapter.stdin.write(frame(1, 'initialize', { adapterID: 'takt' }));
  adapter.stdin.write(frame(2, 'launch', { project: root }));
  let pid;
  // As long as the adapter waits for the runtime to serve its endpoint.
  await until('the process event', () => {
    const m = /"event":"process","body":\{[^}]*"systemProcessId":(\d+)/.exec(text);
    pid = m ? Number(m[1]) : undefined;
    return pid !== undefined;
  }, 60000);
  assert.ok(alive(pid));
  // The private folder of its endpoint, from the runtime's command line.
  const endpoint = /--debug-endpoint\0unix:\/\/([^\0]+)\/control\.sock/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  assert.ok(endpoint, 'the runtime serves a private Unix socket');
  const exit = new Promise((resolve) => adapter.once('exit', (code, signal) => resolve({ code, signal })));
  // Bounded: the adapter's stop allows the runtime a 5 s grace before SIGKILL; a hung adapter fails the
  // test rather than hanging it.
  let timer;
  const exited = Promise.race([exit, new Promise((_, reject) => {
    timer = setTimeout(() => {
      adapter.kill('SIGKILL');
      reject(new Error('the adapter did not exit within 30 s'));
    }, 30000);
  })]).finally(() => clearTimeout(timer));
  exited.catch(() => {}); // handled where awaited
  return { adapter, pid, exited, folder: endpoint[1] };
}

// takt run as the adapter starts it, without the adapter: its stdin a pipe held by this test.
function debugRun(root, endpoint) {
  const child = spawn(takt, ['run', '--project', root, '--debug-endpoint', endpoint], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  let timer;
  const exited = Promise.race([
    new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    new Promise((_, reject) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`takt run did not exit within 60 s:\n${output}`));
      }, 60000);
    }),
  ]).finally(() => clearTimeout(timer));
  exited.catch(() => {}); // handled where awaited
  return { child, exited, output: () => output };
}

// The adapter's pipe on the runtime's stdin is what stops a runtime whose adapter was killed when
// the kernel's parent-death signal does not come (a binary with file capabilities): here nothing
// sends a signal, only the pipe closes.
test('takt run --debug-endpoint stops as on SIGTERM when its stdin closes', async () => {
  const root = project('stdin', SOURCE);
  const folder = mkdtempSync(path.join(tmpdir(), 'takt-dap-stdin-'));
  try {
    const socket = path.join(folder, 'control.sock');
    const run = debugRun(root, `unix://${socket}`);
    await until('the runtime to serve its endpoint', () => existsSync(socket), 60000);
    run.child.stdin.end();
    assert.deepEqual(await run.exited, { code: 0, signal: null }, run.output());
    assert.match(run.output(), /stopped \(its debug adapter ended\): outputs in safe state/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('takt run refuses a --debug-endpoint that is not a Unix socket', async () => {
  const root = project('tcp', SOURCE);
  for (const endpoint of ['tcp://127.0.0.1:0', 'tls://127.0.0.1:0']) {
    const run = debugRun(root, endpoint);
    const { code } = await run.exited;
    assert.notEqual(code, 0);
    assert.match(run.output(), new RegExp(`--debug-endpoint '${endpoint}': expected unix://PATH`));
    assert.equal(processesNaming(root).length, 0);
  }
});

test('the adapter\'s input closing, a SIGTERM or a SIGKILL of the adapter stop the launched runtime', async () => {
  const root = project('bare', SOURCE);
  {
    const { adapter, pid, exited, folder } = await bareLaunch(root);
    adapter.stdin.end();
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.equal(alive(pid), false, 'stopped before the adapter exited');
    assert.equal(existsSync(folder), false, 'the private folder is removed');
  }
  {
    const { adapter, pid, exited, folder } = await bareLaunch(root);
    adapter.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.equal(alive(pid), false, 'stopped before the adapter exited');
    assert.equal(existsSync(folder), false, 'the private folder is removed');
  }
  {
    const { adapter, pid, exited, folder } = await bareLaunch(root);
    adapter.kill('SIGKILL');
    await exited;
    await until('the orphaned runtime to end (its stdin pipe closed, or the parent-death signal)', () => !alive(pid));
    // A killed adapter cannot remove its folder; the token in it is gone already, the socket
    // goes with the runtime.
    await until('the socket to go with the runtime', () => readdirSync(folder).length === 0);
    rmSync(folder, { recursive: true, force: true });
  }
  await noneLeft(root);
});
