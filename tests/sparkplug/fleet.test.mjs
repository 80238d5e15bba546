// `takt fleet status`: the edge nodes of a group as the broker carries them, heard by the command
// itself (no other host application involved in what it reports). Two `takt run` edge nodes on a
// real mosquitto broker; one killed with -9 while the command listens.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { metric, num, startBroker, startHost, startTakt, takt as taktBin } from './support.mjs';

let broker;
let host;
let one;
let two;

before(async () => {
  broker = await startBroker();
  host = await startHost(broker);
  one = await startTakt({ servers: [broker.url], node: 'Line1' });
  two = await startTakt({ servers: [broker.url], node: 'Line2' });
  await host.next('NBIRTH', 0, (m) => m.topic.endsWith('/Line1'));
  await host.next('NBIRTH', 0, (m) => m.topic.endsWith('/Line2'));
});

after(async () => {
  for (const t of [one, two]) {
    await t.stop();
    t.remove();
  }
  await host.close();
  await broker.stop();
});

// Runs `takt fleet status ARGS`; resolves with its exit code, stdout and stderr. `started` is
// given the child process.
function fleetStatus(args, started = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(taktBin, ['fleet', 'status', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    started(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('--rebirth: both nodes born again for the command; the one killed with -9 is offline with its bdSeq', async () => {
  const from = host.messages.length;
  const running = fleetStatus(['--servers', broker.url, '--group', 'Plant1', '--timeout', '6s', '--rebirth', '--json']);
  // The command heard both nodes (their NDATA: the counters move) and asked each for a birth.
  for (const node of ['Line1', 'Line2']) {
    await host.next('NCMD', from, (m) => m.topic.endsWith(`/${node}`) && metric(m.payload, 'Node Control/Rebirth')?.value === true, 5000);
  }
  const reborn = await host.next('NBIRTH', from, (m) => m.topic.endsWith('/Line2'), 5000);
  const at = host.messages.indexOf(reborn);
  await two.kill();
  const death = await host.next('NDEATH', at, (m) => m.topic.endsWith('/Line2'), 5000);
  const { code, stdout, stderr } = await running;
  assert.equal(code, 0, stderr);
  const report = JSON.parse(stdout);
  assert.equal(report.group, 'Plant1');
  const byId = Object.fromEntries(report.nodes.map((n) => [n.edge_node_id, n]));
  assert.deepEqual(Object.keys(byId).sort(), ['Line1', 'Line2']);

  const l1 = byId.Line1;
  const status = await one.status();
  assert.equal(l1.state, 'online');
  assert.equal(l1.birth_seen, true);
  assert.equal(l1.bd_seq, status.sparkplug.bd_seq);
  assert.equal(l1.metrics, 18, 'the variables of the program, without bdSeq, Node Control and Properties');
  assert.equal(l1.program_hash, status.program_hash);
  assert.equal(l1.server, broker.url);
  assert.match(l1.last_birth, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const l2 = byId.Line2;
  assert.equal(l2.state, 'offline', 'NDEATH with the birth\'s bdSeq');
  assert.equal(l2.bd_seq, num(metric(reborn.payload, 'bdSeq').value));
  assert.equal(l2.bd_seq, num(metric(death.payload, 'bdSeq').value));
  assert.equal(l2.last_birth_ms, num(reborn.payload.timestamp));
  assert.equal(l2.metrics, 18);
});

test('without --rebirth a node heard only by its NDATA is online with no birth; the text report says so', async () => {
  const from = host.messages.length;
  const { code, stdout, stderr } = await fleetStatus(['--servers', broker.url, '--group', 'Plant1', '--timeout', '1500ms']);
  assert.equal(code, 0, stderr);
  assert.equal(host.messages.slice(from).filter((m) => m.type === 'NCMD').length, 0, 'nothing sent');
  assert.match(stdout, /Sparkplug group Plant1: 1 edge node\(s\) heard in 1\.5 s, 1 online, 0 offline/);
  assert.match(stdout, /Line1\s+online\s+-\s+\(no birth heard\)/);
  assert.match(stdout, /--rebirth asks each one/);
});

test('no edge node heard: a non-zero exit and why; a bad option names itself; no broker: unreachable', async () => {
  const empty = await fleetStatus(['--servers', broker.url, '--group', 'Nobody', '--timeout', '500ms', '--json']);
  assert.equal(empty.code, 13, empty.stderr);
  assert.deepEqual(JSON.parse(empty.stdout).nodes, []);
  assert.match(empty.stderr, /no edge node of group Nobody was heard within 500 ms/);

  const bad = await fleetStatus(['--servers', 'http://x', '--group', 'Plant1']);
  assert.equal(bad.code, 10);
  assert.match(bad.stderr, /--servers: "http:\/\/x" is not a broker URL/);
  const group = await fleetStatus(['--servers', broker.url, '--group', 'a/b']);
  assert.equal(group.code, 10);
  assert.match(group.stderr, /--group: "a\/b" is not a Sparkplug group ID/);

  const closed = await startBroker();
  await closed.stop();
  const down = await fleetStatus(['--servers', closed.url, '--group', 'Plant1', '--timeout', '2s']);
  assert.equal(down.code, 15, down.stderr);
  assert.match(down.stderr, /no broker could be reached: tcp:\/\/127\.0\.0\.1:\d+: /);
});

test('Ctrl-C ends the listening early and reports what was heard until then', async () => {
  const from = host.messages.length;
  let child;
  const running = fleetStatus(['--servers', broker.url, '--group', 'Plant1', '--timeout', '60s', '--rebirth', '--json'],
    (c) => { child = c; });
  // Listening, and Line1 heard: the command asks it for a birth (and it births).
  await host.next('NBIRTH', from, (m) => m.topic.endsWith('/Line1'), 20000);
  const signalled = Date.now();
  child.kill('SIGINT');
  const { code, stdout, stderr } = await running;
  assert.equal(code, 0, stderr);
  assert.ok(Date.now() - signalled < 10000, `ended ${Date.now() - signalled} ms after Ctrl-C`);
  assert.match(stderr, /interrupted: listened \d+ ms of 60000/);
  const report = JSON.parse(stdout);
  assert.ok(report.listened_ms > 0 && report.listened_ms < 60000, `listened_ms ${report.listened_ms}`);
  assert.equal(report.nodes.find((n) => n.edge_node_id === 'Line1')?.state, 'online');
});
