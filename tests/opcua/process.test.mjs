// The server process as `takt run` supervises it, with stand-in scripts (TAKT_OPCUA_DIR) that
// misbehave on purpose: one that stops reading its channel must not hold up takt's stop; and the
// real server's shutdown as its clients see it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import {
  AttributeIds,
  ClientMonitoredItem,
  ClientSubscription,
  ServerState,
  TimestampsToReturn,
  VariableIds,
} from 'node-opcua-client';
import { startTakt, connect, freePort, realServer, sleep, standIn, until, waitForRestart } from './support.mjs';

const kProgram = `PROGRAM Main
VAR
  counter : UDINT;
END_VAR
counter := counter + 1;
END_PROGRAM
`;

// Says it listens, then sends calls whose answers it never reads: the answers fill the channel
// and the runtime's writes block.
const kDeaf = `'use strict';
const fs = require('fs');
process.stderr.write('opcua: listening on opc.tcp://stand-in\\n');
const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'runtime.stop' }) + '\\n';
const block = line.repeat(1000);
for (let i = 0; i < 50; i++) fs.writeSync(3, block);
setInterval(() => {}, 1000);
`;

// takt run with the stand-in server `script`; `fn(takt)` drives it, the run is stopped after.
async function withStandIn(script, fn, { env = {}, ...options } = {}) {
  const dir = standIn(script);
  const takt = await startTakt({ sources: { 'main.st': kProgram }, env: { TAKT_OPCUA_DIR: dir, ...env }, ...options });
  try {
    await fn(takt);
  } finally {
    await takt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Stops takt run and checks that it ended by itself, within `boundMs`.
async function stopWithin(takt, boundMs) {
  const t0 = Date.now();
  const { code, signal, output } = await takt.stop();
  const ms = Date.now() - t0;
  assert.equal(signal, null, `takt run was killed after ${ms} ms: ${output}`);
  assert.equal(code, 0, output);
  assert.ok(ms < boundMs, `takt run took ${ms} ms to stop`);
  return { ms, output };
}

// Says what it was started with: its process group, its stdin and NODE_OPTIONS.
const kProbe = `'use strict';
const fs = require('fs');
const pgrp = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2];
process.stderr.write('opcua: probe pid=' + process.pid + ' pgrp=' + pgrp + ' stdin=' + fs.readlinkSync('/proc/self/fd/0') +
  ' node_options=' + JSON.stringify(process.env.NODE_OPTIONS || '') + '\\n');
process.stderr.write('opcua: listening on opc.tcp://stand-in\\n');
process.on('SIGTERM', () => process.exit(0));
setInterval(() => {}, 1000);
`;

test('the server process has a process group of its own, no stdin and no NODE_OPTIONS; Ctrl-C does not restart it', async () => {
  await withStandIn(
    kProbe,
    async (takt) => {
      const probe = takt.output().match(/opcua: probe pid=(\d+) pgrp=(\d+) stdin=(\S+) node_options=(\S*)/);
      assert.ok(probe, takt.output());
      assert.equal(probe[2], probe[1], 'its own process group');
      assert.notEqual(probe[2], String(takt.child.pid));
      assert.equal(probe[3], '/dev/null');
      assert.equal(probe[4], '""');
      // Ctrl-C signals the terminal's foreground group: takt's.
      process.kill(-takt.child.pid, 'SIGINT');
      const { output } = await stopWithin(takt, 6000);
      assert.doesNotMatch(output, /starting it again/);
    },
    { env: { NODE_OPTIONS: '--max-old-space-size=200' }, detached: true, stdin: 'pipe' },
  );
});

// Makes variable calls on the channel, exposed names and others, and says what each was answered.
const kCaller = `'use strict';
const net = require('net');
const readline = require('readline');
const socket = new net.Socket({ fd: 3, readable: true, writable: true });
const calls = [
  ['var.read', { names: ['Main.counter'] }],
  ['var.read', { names: ['Main.counter', 'Main.hidden'] }],
  ['var.read', { name: 'Main.hidden' }],
  ['var.write', { name: 'Main.hidden', value: { type: 'DINT', value: 5 } }],
  ['var.subscribe', { names: ['Main.hidden'] }],
  ['var.subscribe', { pattern: 'Main.*' }],
  ['var.subscribe', { names: ['Main.counter'] }],
];
const answers = new Map();
readline.createInterface({ input: socket }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'opcua.configure') {
    calls.forEach(([method, params], i) => socket.write(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method, params }) + '\\n'));
  } else if (m.id !== undefined && !answers.has(m.id)) {
    answers.set(m.id, m.error ? 'error ' + m.error.code + ' ' + m.error.message : 'ok');
    if (answers.size === calls.length) {
      for (let i = 1; i <= calls.length; i++) process.stderr.write('opcua: answer ' + i + ': ' + answers.get(i) + '\\n');
      process.stderr.write('opcua: listening on opc.tcp://stand-in\\n');
    }
  }
});
process.on('SIGTERM', () => process.exit(0));
`;

test('the runtime refuses variable calls of the server process for variables expose leaves out', async () => {
  const dir = standIn(kCaller);
  const sources = {
    'main.st': `PROGRAM Main
VAR
  counter : UDINT;
  hidden : DINT;
END_VAR
counter := counter + 1;
END_PROGRAM
`,
  };
  const takt = await startTakt({ sources, env: { TAKT_OPCUA_DIR: dir }, opcuaToml: 'expose = ["main.c*"]' });
  try {
    const answers = Object.fromEntries([...takt.output().matchAll(/opcua: answer (\d+): (.*)/g)].map((m) => [m[1], m[2]]));
    assert.equal(answers[1], 'ok');
    assert.equal(answers[2], 'error -32011 names[1]: Main.hidden is not exposed to OPC UA');
    assert.equal(answers[3], 'error -32011 name: Main.hidden is not exposed to OPC UA');
    assert.equal(answers[4], 'error -32011 name: Main.hidden is not exposed to OPC UA');
    assert.equal(answers[5], 'error -32011 names[0]: Main.hidden is not exposed to OPC UA');
    assert.match(answers[6], /^error -32011 pattern: /);
    assert.equal(answers[7], 'ok');
  } finally {
    await takt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('takt run stops while the server process does not read its channel', async () => {
  await withStandIn(kDeaf, async (takt) => {
    await sleep(1500); // its flood is in: takt is blocked writing answers
    await stopWithin(takt, 8000);
  });
});

test('a server process that stops reading its channel is given up and started again', async () => {
  await withStandIn(kDeaf, async (takt) => {
    await until('the stalled process to be given up', () => /stopped reading its channel for 5 s; starting it again/.test(takt.output()), 20000);
    await until('the process started again', () => takt.output().split('opcua: listening on').length > 2, 10000);
  });
});

test('on stop the server tells its clients it shuts down before it ends', async () => {
  const takt = await startTakt({ sources: { 'main.st': kProgram } });
  let ua;
  try {
    ua = await connect(takt.endpoint);
    const sub = await ClientSubscription.create(ua.session, {
      requestedPublishingInterval: 100,
      requestedLifetimeCount: 1000,
      requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0,
      publishingEnabled: true,
      priority: 1,
    });
    const item = ClientMonitoredItem.create(
      sub,
      { nodeId: VariableIds.Server_ServerStatus_State, attributeId: AttributeIds.Value },
      { samplingInterval: 100, discardOldest: true, queueSize: 10 },
      TimestampsToReturn.Both,
    );
    const states = [];
    item.on('changed', (dv) => states.push(dv.value.value));
    await until('the running state', () => states.includes(ServerState.Running), 5000);
    const { output } = await stopWithin(takt, 6000);
    assert.ok(states.includes(ServerState.Shutdown), `server states seen: ${states}`);
    assert.match(output, /opcua: shut down/);
  } finally {
    if (ua) await ua.client.disconnect().catch(() => {});
    await takt.stop();
  }
});

// A hung server (its process stopped, not dead: nothing reaps it) stops answering the runtime's
// liveness ping on the channel; after 10 s without an answer it is ended (SIGTERM, SIGKILL 3 s
// later) and started again after the 1 s back-off.
test('a server process that stops answering the liveness ping (SIGSTOP) is ended and started again', async (t) => {
  const takt = await startTakt({ sources: { 'main.st': kProgram } });
  try {
    const before = await until('the server running', async () => {
      const s = await takt.status();
      return s.opcua.state === 'running' ? s : null;
    });
    process.kill(before.opcua.pid, 'SIGSTOP');
    const stopped = Date.now();
    const after = await waitForRestart(takt);
    const ms = Date.now() - stopped;
    t.diagnostic(`running again ${ms} ms after SIGSTOP`);
    assert.notEqual(after.pid, before.opcua.pid);
    assert.equal(after.reason, 'did not answer the liveness ping for 10 s');
    assert.ok(ms < 45000, `running again only ${ms} ms after SIGSTOP`);
    assert.throws(() => process.kill(before.opcua.pid, 0), /ESRCH/, 'the stopped process is gone');
    assert.match(takt.output(), /opcua: the server process did not answer the liveness ping for 10 s; starting it again in 1000 ms/);
    const ua = await connect(takt.endpoint);
    await ua.close();
  } finally {
    await takt.stop();
  }
});

// The server's health in /metrics and runtime.status, from its answers to the liveness ping: up,
// restarts, sessions, subscriptions and monitored items.
test('the server health is in /metrics and runtime.status: up, restarts, sessions, monitored items', async () => {
  const webPort = await freePort();
  const takt = await startTakt({ sources: { 'main.st': kProgram }, opcuaToml: `\n[runtime.web]\nlisten = "127.0.0.1:${webPort}"\n` });
  let ua;
  try {
    const metric = async (name) => {
      const text = await (await fetch(`http://127.0.0.1:${webPort}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    await until('takt_opcua_up 1', async () => (await metric('takt_opcua_up')) === 1);
    assert.equal(await metric('takt_opcua_restarts_total'), 0);
    ua = await connect(takt.endpoint);
    const sub = await ClientSubscription.create(ua.session, {
      requestedPublishingInterval: 100,
      requestedLifetimeCount: 1000,
      requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 0,
      publishingEnabled: true,
    });
    const ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:cell');
    for (const nodeId of [`ns=${ns};s=Main.counter`, VariableIds.Server_ServerStatus_State]) {
      ClientMonitoredItem.create(sub, { nodeId, attributeId: AttributeIds.Value }, { samplingInterval: 100, queueSize: 1 }, TimestampsToReturn.Both);
    }
    await until('one session and two monitored items in /metrics', async () =>
      (await metric('takt_opcua_sessions')) === 1 && (await metric('takt_opcua_monitored_items')) === 2 &&
      (await metric('takt_opcua_subscriptions')) === 1, 15000);
    const status = (await takt.status()).opcua;
    assert.equal(status.sessions, 1);
    assert.equal(status.subscriptions, 1);
    assert.equal(status.monitored_items, 2);
    await ua.close();
    ua = undefined;
    await until('no session in /metrics', async () => (await metric('takt_opcua_sessions')) === 0, 15000);
  } finally {
    if (ua) await ua.close().catch(() => {});
    await takt.stop();
  }
});

// The CPUs of a Cpus_allowed_list ("0-2,5").
const cpusOf = (list) =>
  list.split(',').flatMap((part) => {
    const [lo, hi = lo] = part.split('-').map(Number);
    return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  });

// A Cpus_allowed_list of `cpus` (ascending): each run of CPUs as "a-b", as /proc writes it.
const listOf = (cpus) =>
  cpus
    .reduce((runs, c) => {
      const last = runs[runs.length - 1];
      if (last && last[1] === c - 1) last[1] = c;
      else runs.push([c, c]);
      return runs;
    }, [])
    .map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`))
    .join(',');

// The nice level (field 19 of stat) and the CPUs of every thread of `pid`; a thread that ends between the
// listing and the reading is left out.
function threadsOf(pid) {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' '); // from field 3, the state
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      return [{ tid, nice: Number(fields[16]), cpus: /Cpus_allowed_list:\s*(\S+)/.exec(status)[1] }];
    } catch (e) {
      if (e.code === 'ENOENT' || e.code === 'ESRCH') return [];
      throw e;
    }
  });
}

// The placement never raises priority: a takt started at a nice level above 10 (this test's, inherited)
// keeps it for the server.
const ownNice = () => {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16]);
};
const expectedNice = () => Math.max(ownNice(), 10);

// Every thread of the running server process runs at nice max(own, 10) on `cpus`; its pid.
async function assertPlaced(takt, cpus, restarts = 0) {
  const { pid } = restarts === 0
    ? await until('the server running', async () => {
        const { opcua } = await takt.status();
        return opcua.state === 'running' ? opcua : null;
      })
    : await waitForRestart(takt, { restarts });
  const threads = threadsOf(pid);
  assert.ok(threads.length > 1, 'Node.js runs threads of its own');
  for (const t of threads) {
    assert.deepEqual({ nice: t.nice, cpus: t.cpus }, { nice: expectedNice(), cpus }, `thread ${t.tid} of ${pid}`);
  }
  return pid;
}

// takt's own CPUs, as `takt run` inherits them from this test.
const ownCpus = () => cpusOf(/Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);

test('the server process runs at nice 10 off the CPUs cpu_affinity pins the scan to, and so does its restart', async (t) => {
  const cpus = ownCpus();
  if (cpus.length < 2) {
    t.skip(`one CPU (${cpus}): nothing to keep the server off`);
    return;
  }
  const scan = cpus[cpus.length - 1];
  const rest = cpus.slice(0, -1);
  const expected = listOf(rest);
  const takt = await startTakt({ sources: { 'main.st': kProgram }, opcuaToml: `\n[runtime.realtime]\ncpu_affinity = [${scan}]\n` });
  try {
    const first = await assertPlaced(takt, expected);
    assert.match(takt.output(), new RegExp(`opcua: the server process runs at nice ${expectedNice()} on CPUs ${expected} \\(the scan's CPUs ${scan} left out\\)`));
    process.kill(first, 'SIGKILL');
    const second = await assertPlaced(takt, expected, 1);
    assert.notEqual(second, first);
  } finally {
    await takt.stop();
  }
});

test('the server process runs on every CPU when cpu_affinity gives the scan all of them, and says so', async () => {
  const cpus = ownCpus();
  const all = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1];
  const takt = await startTakt({ sources: { 'main.st': kProgram }, opcuaToml: `\n[runtime.realtime]\ncpu_affinity = [${cpus.join(', ')}]\n` });
  try {
    await assertPlaced(takt, all);
    assert.match(takt.output(), new RegExp(`opcua: the server process runs at nice ${expectedNice()} on CPUs ${all}: the scan's cpu_affinity ${all} leaves no other CPU`));
  } finally {
    await takt.stop();
  }
});

// The real server, which on SIGUSR2 keeps its event loop busy until it has had 2 s of CPU: no
// ping is answered meanwhile. It says so on stderr when it is done.
const kBusyOnSignal = `'use strict';
process.on('SIGUSR2', () => {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= 3e6) break;
  }
  process.stderr.write('stand-in: had 3 s of CPU\\n');
});
require(${JSON.stringify(realServer)});
`;

// On a busy machine the server, at nice 10, waits for a CPU behind the busy processes: a stretch
// that needs 3 s of CPU then takes about 30 s, three times the ping's 10 s (2 s took as little as
// 11.7 s once: the share nice 10 gets is not exact). Waiting for a CPU is no hang
// (the deadline counts the time it was given): the process runs on, and is not started again from
// nothing to be starved again.
test('a server process starved of CPU past the ping\'s 10 s is not taken for hung', async (t) => {
  if (expectedNice() - ownNice() < 5) {
    t.skip(`this test runs at nice ${ownNice()}: the server is not below a process of its own`);
    return;
  }
  const dir = standIn(kBusyOnSignal);
  const takt = await startTakt({ sources: { 'main.st': kProgram }, env: { TAKT_OPCUA_DIR: dir } });
  let hog;
  try {
    const before = await until('the server running', async () => {
      const { opcua } = await takt.status();
      return opcua.state === 'running' ? opcua : null;
    });
    // The server and a busy loop at this test's nice level on one CPU.
    const cpu = String(ownCpus()[0]);
    await promisify(execFile)('taskset', ['-a', '-p', '-c', cpu, String(before.pid)]);
    hog = spawn('taskset', ['-c', cpu, 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' });
    await sleep(200);
    const t0 = Date.now();
    process.kill(before.pid, 'SIGUSR2');
    await until('the busy stretch to end, or a restart', async () =>
      takt.output().includes('stand-in: had 3 s of CPU') || (await takt.status()).opcua.restarts > 0, 120000);
    const ms = Date.now() - t0;
    hog.kill('SIGKILL');
    t.diagnostic(`3 s of CPU took ${ms} ms`);
    const after = (await takt.status()).opcua;
    assert.doesNotMatch(takt.output(), /did not answer the liveness ping/);
    assert.equal(after.pid, before.pid);
    assert.equal(after.restarts, 0);
    assert.ok(ms > 12000, `starved for only ${ms} ms: not past the ping's 10 s, so this run proves nothing`);
    const ua = await connect(takt.endpoint);
    await ua.close();
  } finally {
    hog?.kill('SIGKILL');
    await takt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
