// A measurement, not a test (run by hand: `TAKT_BIN=build-test/takt node tests/opcua/load.mjs
// [items] [seconds]`): `takt run` of a program of `items` DINTs that all change every 10 ms cycle,
// first with no OPC UA client, then with one subscription monitoring every variable at a 100 ms
// sampling and publishing interval. Prints JSON: notifications received per second, the server
// process's CPU and RSS, takt's CPU, and the scan's lateness p99 in each window (from
// runtime.histogram's difference over the window), and how many var.read calls the server made
// while subscribed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AttributeIds, ClientMonitoredItemGroup, ClientSubscription, TimestampsToReturn } from 'node-opcua-client';
import { startTakt, connect, sleep, takt as taktBin } from './support.mjs';

const items = Number(process.argv[2] || 1000);
const seconds = Number(process.argv[3] || 10);

const decls = Array.from({ length: items }, (_, i) => `  v${i} : DINT;`).join('\n');
const body = Array.from({ length: items }, (_, i) => `v${i} := v${i} + 1;`).join('\n');
const takt = await startTakt({
  sources: { 'main.st': `PROGRAM Main\nVAR\n${decls}\nEND_VAR\n${body}\nEND_PROGRAM\n` },
  opcuaToml: `max_nodes = ${items + 10}\n`,
});

const ctl = async (method) =>
  JSON.parse((await promisify(execFile)(taktBin, ['ctl', '--project', takt.dir, method])).stdout);
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, s (USER_HZ 100)
};
const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
const p99 = (before, after) => {
  const delta = after.lateness.map(([low, high, n], i) => [low, high, n - (before.lateness[i] ? before.lateness[i][2] : 0)]);
  const total = delta.reduce((s, b) => s + b[2], 0);
  let seen = 0;
  for (const [, high, n] of delta) {
    seen += n;
    if (seen >= total * 0.99) return high;
  }
  return null;
};

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
group.on('changed', () => notifications++);
await sleep(2000); // the group is set up and fed
const subscribed = await window(async () => {
  const n0 = notifications;
  const r0 = reads();
  await sleep(seconds * 1000);
  return { notifications_per_s: Math.round((notifications - n0) / seconds), var_reads: reads() - r0 };
});
await sub.terminate();
await ua.close();
const { output } = await takt.stop();
console.log(JSON.stringify({ items, seconds, idle, subscribed, overruns: /overruns=(\d+)/.exec(output)?.[1] }, null, 1));
