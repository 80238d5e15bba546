// 10,000 monitored items on the OPC UA server of `takt run`, every one changing every 10 ms
// cycle, sampled at 100 ms by one client: every item keeps getting values (none of the ten feeds of
// 1,000 starves), and once they flow the control endpoint stays responsive while the runtime
// samples and renders them (every runtime.status call is answered within kStatusMs). The sampling
// rounds run on the control thread; one round is bounded (ValueSubscriptions::kRoundVariables)
// and the next starts where it ran out. The monitored items' creation (ten var.subscribe calls
// and the reads of first values, resolving 20,000 paths) keeps within the same bound: paths
// resolve through the program's index (engine::PathIndex), not a search of every variable.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { AttributeIds, ClientMonitoredItemGroup, ClientSubscription, TimestampsToReturn } from 'node-opcua-client';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { startTakt, connect, sleep } from './support.mjs';

const kItems = 10000;
// The bound of one runtime.status round trip (a new connection each time) on a loaded 2-core
// machine, sanitizer build, with the OPC UA server and this client using a core between them;
// docs/performance.md has the figures (before the bounded rounds it took seconds).
const kStatusMs = 1000;
// The bound while the items are created (20,000 paths resolved, the first values read): before the
// path index the slowest call took 3.3-6.5 s here.
const kCreateStatusMs = 2000;
const kSteadyMs = 10000;

let takt;
let ua;

after(async () => {
  if (ua) await ua.close().catch(() => {});
  if (takt) await takt.stop();
});

test('10,000 monitored items keep arriving and the control endpoint answers within the bound', { timeout: 150000 }, async (t) => {
  const decls = Array.from({ length: kItems }, (_, i) => `  v${i} : DINT;`).join('\n');
  const body = Array.from({ length: kItems }, (_, i) => `v${i} := v${i} + 1;`).join('\n');
  takt = await startTakt({
    sources: { 'main.st': `PROGRAM Main\nVAR\n${decls}\nEND_VAR\n${body}\nEND_PROGRAM\n` },
    opcuaToml: `max_nodes = ${kItems + 10}\n`,
  });
  ua = await connect(takt.endpoint);
  const ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:cell');
  const sub = await ClientSubscription.create(ua.session, {
    requestedPublishingInterval: 100,
    requestedLifetimeCount: 1000,
    requestedMaxKeepAliveCount: 20,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
  });
  // The last value of each item and how many times it changed.
  const last = new Array(kItems).fill(null);
  const changes = new Array(kItems).fill(0);
  const created = Date.now();
  let flowing = Infinity; // when every item had changed twice
  const group = ClientMonitoredItemGroup.create(
    sub,
    Array.from({ length: kItems }, (_, i) => ({ nodeId: `ns=${ns};s=Main.v${i}`, attributeId: AttributeIds.Value })),
    { samplingInterval: 100, queueSize: 1, discardOldest: true },
    TimestampsToReturn.Neither,
  );
  let notifications = 0;
  group.on('changed', (item, value, index) => {
    notifications++;
    last[index] = value.value.value;
    changes[index]++;
  });

  // runtime.status, one call after the other, from now until the end, timed on a thread of its
  // own: this one is busy with the client's notifications, and its delays are not the runtime's.
  const prober = new Worker(new URL('./status_probe.mjs', import.meta.url), {
    workerData: { socket: path.join(takt.dir, 'takt.sock') },
  });
  const probes = [];
  prober.on('message', (m) => probes.push(m));
  try {
    // Every item has changed at least twice (its first value and a change after it): all 10
    // feeds of 1,000 run.
    const end = Date.now() + 90000;
    while (changes.some((n) => n < 2) && Date.now() < end) {
      await sleep(250);
    }
    const missing = changes.filter((n) => n < 2).length;
    assert.equal(missing, 0, `${missing} of ${kItems} items did not change twice within 90 s`);
    flowing = Date.now();
    t.diagnostic(`every item changed twice ${flowing - created} ms after the items were created`);
    // A steady window: notifications keep flowing for every item.
    const before = last.slice();
    const n0 = notifications;
    await sleep(kSteadyMs);
    const rate = ((notifications - n0) * 1000) / kSteadyMs;
    const stale = last.filter((v, i) => v === before[i]).length;
    assert.equal(stale, 0, `${stale} items did not change in ${kSteadyMs} ms`);
    t.diagnostic(`${Math.round(rate)} notifications/s`);
  } finally {
    await prober.terminate();
  }
  const refused = probes.filter((m) => m.error);
  assert.equal(refused.length, 0, JSON.stringify(refused[0]));
  const during = (list) => {
    const ms = list.map((m) => (m.ms === null ? Infinity : m.ms)).sort((a, b) => a - b);
    return `${ms.length} calls, median ${Math.round(ms[Math.floor(ms.length / 2)])} ms, the slowest ${Math.round(ms[ms.length - 1])} ms`;
  };
  const setup = probes.filter((m) => m.at < flowing);
  const steady = probes.filter((m) => m.at >= flowing);
  t.diagnostic(`runtime.status while the items were created: ${during(setup)}`);
  t.diagnostic(`runtime.status while they flowed: ${during(steady)}`);
  assert.ok(steady.length >= 20, `only ${steady.length} runtime.status calls were made`);
  for (const [when, list, bound] of [['while the items were created', setup, kCreateStatusMs], ['while they flowed', steady, kStatusMs]]) {
    const slow = list.filter((m) => m.ms === null || m.ms > bound);
    assert.equal(
      slow.length,
      0,
      `runtime.status ${when} over ${bound} ms: ${slow.map((m) => `${m.ms === null ? 'none' : Math.round(m.ms)} ms at ${m.at - created} ms`).join(', ')}`,
    );
  }
  await sub.terminate();
});
