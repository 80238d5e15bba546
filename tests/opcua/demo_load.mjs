// A measurement, not a test (scripts/opcua-perf.sh runs it on a Release build; docs/performance.md
// "OPC UA server on the demo"): the demo project (examples/demo, 10 ms FastTask, simulated plant)
// with a third program of ITEMS DINTs that count the FastTask's cycles, run alternately without
// the OPC UA server and with it serving one node-opcua client that monitors every counter at a
// 100 ms sampling and publishing interval. Runs of both kinds are interleaved (without, with, with,
// without, …), so the machine's load drifts over both alike. Each run measures one window of
// SECONDS once it is settled: the scan's lateness p99 and p99.9 (from runtime.histogram's
// difference over the window, bucket upper edges), takt's CPU, the load average; with the server
// also the notification latency p50/p99 (from the start of the cycle that made a value to the
// client's receipt: value n was made by cycle n, and a runtime.status ties cycle numbers to the
// clock), notifications per second, and the server process's CPU and RSS.
//
// `TAKT_BIN=build-rel/takt node demo_load.mjs [--items 1000,10000] [--seconds 20] [--pairs 2]
// [--fifo] [--unlocked] [--scan-cpu N] [--out FILE]`; --fifo runs the scan as a deployed PLC does
// (SCHED_FIFO 80, memory locked; --unlocked leaves the memory unlocked, for a sanitizer build, whose
// shadow memory cannot be locked); --scan-cpu pins the scan thread to CPU N ([runtime.realtime] cpu_affinity = [N]),
// so takt runs its OPC UA server on the other CPUs. This process, the client, is then expected to
// run off CPU N and niced (scripts/opcua-perf.sh starts it so): takt is started through taskset
// and nice to get every CPU and this process's nice level back, as a service of its own would.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AttributeIds, ClientMonitoredItemGroup, ClientSubscription, TimestampsToReturn } from 'node-opcua-client';
import { connect, freePort, repo, runProject, sleep } from './support.mjs';
import { cpuOf, quantile, rssOf, histogramQuantile, ctl } from './measure.mjs';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '1000,10000' },
    seconds: { type: 'string', default: '20' },
    pairs: { type: 'string', default: '2' },
    fifo: { type: 'boolean', default: false },
    'scan-cpu': { type: 'string' },
    unlocked: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const seconds = Number(args.seconds);
const cycleMs = 10; // the demo's FastTask and base cycle
const scanCpu = args['scan-cpu'];
// takt as it runs without this process's CPUs and nice level (both inherited from it).
const ownNice = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[16]);
const wrap = scanCpu === undefined ? [] : ['taskset', '-c', `0-${cpus().length - 1}`, 'nice', '-n', String(-ownNice)];

// The demo in a folder of its own, with the counters' program in its configuration, its control
// endpoint in the folder, and the server (or not) on a free port.
async function demoProject(items, withServer) {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-opcua-demo-'));
  cpSync(path.join(repo, 'examples', 'demo'), dir, { recursive: true });
  const decls = Array.from({ length: items }, (_, i) => `  v${i} : DINT;`).join('\n');
  const body = Array.from({ length: items }, (_, i) => `v${i} := v${i} + 1;`).join('\n');
  writeFileSync(path.join(dir, 'src', 'opcua_load.st'), `PROGRAM OpcuaLoad\nVAR\n${decls}\nEND_VAR\n${body}\nEND_PROGRAM\n`);
  const config = path.join(dir, 'src', 'configuration.st');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace('END_RESOURCE', '    PROGRAM Load WITH FastTask : OpcuaLoad;\n    END_RESOURCE'),
  );
  const port = await freePort();
  const toml = path.join(dir, 'runtime.toml');
  let text = readFileSync(toml, 'utf8').replace(/^endpoint = .*$/m, `endpoint = "unix://${dir}/takt.sock"`);
  if (args.fifo || scanCpu !== undefined) text += '\n[runtime.realtime]\n';
  if (args.fifo) text += `scheduler = "fifo"\npriority = 80\nlock_memory = ${!args.unlocked}\n`;
  if (scanCpu !== undefined) text += `cpu_affinity = [${Number(scanCpu)}]\n`;
  text += `\n[runtime.opcua]\nenabled = ${withServer}\nlisten = "127.0.0.1:${port}"\nmax_nodes = ${items + 1000}\n`;
  writeFileSync(toml, text);
  return { dir, port };
}

// One window of `seconds` on the running `takt`: the scan's figures, and what `extra` adds.
async function window(takt, serverPid, extra) {
  const status = await ctl(takt.dir, 'runtime.status');
  const taktPid = takt.child.pid;
  const h0 = await ctl(takt.dir, 'runtime.histogram');
  const c0 = cpuOf(taktPid);
  const s0 = serverPid ? cpuOf(serverPid) : 0;
  const load0 = loadavg()[0];
  const more = await extra();
  const h1 = await ctl(takt.dir, 'runtime.histogram');
  const out = {
    lateness_p99_us: histogramQuantile(h0, h1, 0.99),
    lateness_p999_us: histogramQuantile(h0, h1, 0.999),
    takt_cpu_percent: Math.round(((cpuOf(taktPid) - c0) / seconds) * 1000) / 10,
    load_average: [Math.round(load0 * 10) / 10, Math.round(loadavg()[0] * 10) / 10],
    state: status.state,
    ...more,
  };
  if (serverPid) {
    out.server_cpu_percent = Math.round(((cpuOf(serverPid) - s0) / seconds) * 1000) / 10;
    out.server_rss_mib = Math.round(rssOf(serverPid) / 1048576);
    // Where the server ran (takt places it: opcua_placement.h) and where this process, the client, did.
    const placement = (pid) => ({
      nice: Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[16]),
      cpus: /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1],
    });
    out.server_placement = placement(serverPid);
    out.client_placement = placement(process.pid);
  }
  return out;
}

async function without(items) {
  const { dir, port } = await demoProject(items, false);
  const takt = await runProject(dir, port, { listening: false, wrap });
  try {
    await sleep(3000); // settled: the first cycles and the retain file are behind
    return await window(takt, 0, async () => {
      await sleep(seconds * 1000);
      return {};
    });
  } finally {
    await takt.stop();
  }
}

async function withServer(items) {
  const { dir, port } = await demoProject(items, true);
  const takt = await runProject(dir, port, { wrap });
  let ua;
  try {
    ua = await connect(takt.endpoint);
    const ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:filling_line');
    const sub = await ClientSubscription.create(ua.session, {
      requestedPublishingInterval: 100,
      requestedLifetimeCount: 1000,
      requestedMaxKeepAliveCount: 20,
      maxNotificationsPerPublish: 0,
      publishingEnabled: true,
    });
    const group = ClientMonitoredItemGroup.create(
      sub,
      Array.from({ length: items }, (_, i) => ({ nodeId: `ns=${ns};s=Load.v${i}`, attributeId: AttributeIds.Value })),
      { samplingInterval: 100, queueSize: 1, discardOldest: true },
      TimestampsToReturn.Both,
    );
    let notifications = 0;
    let latencies = null; // ms, while measuring
    let origin = 0;
    group.on('changed', (item, dataValue) => {
      notifications++;
      if (latencies) latencies.push(performance.now() - (origin + (dataValue.value.value - 1) * cycleMs));
    });
    // Value n was made by cycle n, which started at origin + (n - 1) * cycleMs.
    const t0 = performance.now();
    const { cycles } = await ctl(dir, 'runtime.status');
    origin = (t0 + performance.now()) / 2 - (cycles - 1) * cycleMs;
    const settleEnd = Date.now() + 60000;
    while (notifications < items * 3 && Date.now() < settleEnd) await sleep(500);
    await sleep(3000);
    const { opcua } = await ctl(dir, 'runtime.status');
    return await window(takt, opcua.pid, async () => {
      const n0 = notifications;
      latencies = [];
      await sleep(seconds * 1000);
      const seen = latencies;
      latencies = null;
      return {
        monitored_items: opcua.monitored_items,
        notifications_per_s: Math.round((notifications - n0) / seconds),
        latency_p50_ms: quantile(seen, 0.5),
        latency_p99_ms: quantile(seen, 0.99),
      };
    });
  } finally {
    if (ua) await ua.close().catch(() => {});
    await takt.stop();
  }
}

const results = [];
for (const items of args.items.split(',').map(Number)) {
  for (let pair = 0; pair < Number(args.pairs); pair++) {
    // without, with, with, without, …: a drift of the machine's load falls on both kinds alike
    const order = pair % 2 === 0 ? [false, true] : [true, false];
    for (const server of order) {
      const r = server ? await withServer(items) : await without(items);
      const line = { items, server, fifo: args.fifo, scan_cpu: scanCpu === undefined ? null : Number(scanCpu), seconds, ...r };
      console.log(JSON.stringify(line));
      results.push(line);
    }
  }
}
if (args.out) writeFileSync(args.out, JSON.stringify(results, null, 1));
