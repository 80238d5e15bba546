// A measurement, not a test (run by hand: `TAKT_BIN=build-test/takt node tests/opcua/load.mjs
// [items] [seconds]`): `takt run` of a program of `items` DINTs that all change every 10 ms cycle,
// first with no OPC UA client, then with one subscription monitoring every variable at a 100 ms
// sampling and publishing interval. Prints JSON: notifications received per second, the server
// process's CPU and RSS, takt's CPU, and the scan's lateness p99 in each window (from
// runtime.histogram's difference over the window), and how many var.read calls the server made
// while subscribed; while subscribed also the notification latency p50/p99 (from the cycle that
// made a value to the client's receipt of it: every variable counts the cycles, and a
// runtime.status before the subscription ties cycle numbers to the clock) and the round trip of a
// runtime.status call on the control endpoint p50/max (timed on a thread of its own,
// status_probe.mjs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AttributeIds, ClientMonitoredItemGroup, ClientSubscription, TimestampsToReturn } from 'node-opcua-client';
import { startTakt, connect, sleep } from './support.mjs';
import { cpuOf, ctl as ctlOf, histogramQuantile, quantile, rssOf } from './measure.mjs';

const items = Number(process.argv[2] || 1000);
const seconds = Number(process.argv[3] || 10);

const decls = Array.from({ length: items }, (_, i) => `  v${i} : DINT;`).join('\n');
const body = Array.from({ length: items }, (_, i) => `v${i} := v${i} + 1;`).join('\n');
const takt = await startTakt({
  sources: { 'main.st': `PROGRAM Main\nVAR\n${decls}\nEND_VAR\n${body}\nEND_PROGRAM\n` },
  opcuaToml: `max_nodes = ${items + 10}\n`,
});

const ctl = (method) => ctlOf(takt.dir, method);
const p99 = (before, after) => histogramQuantile(before, after, 0.99);

async function window(measure) {
  const status = await ctl('runtime.status');
  const pid = status.opcua.pid;
  const taktPid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  const h0 = await ctl('runtime.histogram');
  const c0 = cpuOf(pid);
  const t0 = cpuOf(taktPid);
  const extra = await measure();
  const h1 = await ctl('runtime.histogram');
  return {
    lateness_p99_us: p99(h0, h1),
    server_cpu_percent: Math.round(((cpuOf(pid) - c0) / seconds) * 1000) / 10,
    takt_cpu_percent: Math.round(((cpuOf(taktPid) - t0) / seconds) * 1000) / 10,
    server_rss_mib: Math.round(rssOf(pid) / 1048576),
    ...extra,
  };
}

const ua = await connect(takt.endpoint);
const ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:cell');
const idle = await window(async () => {
  await sleep(seconds * 1000);
  return {};
});
const reads = () =>
  readFileSync(path.join(takt.dir, '.takt', 'audit.log'), 'utf8')
    .split('\n')
    .filter((l) => /peer=opcua:anonymous .*method=var\.read /.test(l)).length;
const sub = await ClientSubscription.create(ua.session, {
  requestedPublishingInterval: 100,
  requestedLifetimeCount: 1000,
  requestedMaxKeepAliveCount: 20,
  maxNotificationsPerPublish: 0,
  publishingEnabled: true,
});
const group = ClientMonitoredItemGroup.create(
  sub,
  Array.from({ length: items }, (_, i) => ({ nodeId: `ns=${ns};s=Main.v${i}`, attributeId: AttributeIds.Value })),
  { samplingInterval: 100, queueSize: 1, discardOldest: true },
  TimestampsToReturn.Both,
);
let notifications = 0;
let latencies = null; // ms, while measuring
group.on('changed', (item, dataValue) => {
  notifications++;
  if (latencies) latencies.push(performance.now() - (origin + (dataValue.value.value - 1) * cycleMs));
});
// Every value is the count of cycles that made it: the time of cycle n is origin + (n - 1) * cycleMs.
const cycleMs = 10;
const t0 = performance.now();
const { cycles } = await ctl('runtime.status');
const origin = (t0 + performance.now()) / 2 - (cycles - 1) * cycleMs;
// Set up and fed: the last item has changed.
while (notifications < items * 2) await sleep(500);
await sleep(2000);
const subscribed = await window(async () => {
  const n0 = notifications;
  const r0 = reads();
  latencies = [];
  const probes = [];
  const prober = new Worker(new URL('./status_probe.mjs', import.meta.url), {
    workerData: { socket: path.join(takt.dir, 'takt.sock') },
  });
  prober.on('message', (m) => probes.push(m.ms === null ? Infinity : m.ms));
  await sleep(seconds * 1000);
  await prober.terminate();
  const seen = latencies;
  latencies = null;
  return {
    notifications_per_s: Math.round((notifications - n0) / seconds),
    latency_p50_ms: quantile(seen, 0.5),
    latency_p99_ms: quantile(seen, 0.99),
    status_p50_ms: quantile(probes, 0.5),
    status_max_ms: Math.round(Math.max(...probes)),
    var_reads: reads() - r0,
  };
});
await sub.terminate();
await ua.close();
const { output } = await takt.stop();
console.log(JSON.stringify({ items, seconds, idle, subscribed, overruns: /overruns=(\d+)/.exec(output)?.[1] }, null, 1));
