// The edge node's sessions: NDEATH as the will with the birth's bdSeq, bdSeq across restarts,
// failover to the next broker, Node Control/Next Server, and the primary host's STATE. Two real
// mosquitto brokers on loopback; a host application on each.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { kConfig, metric, num, sleep, startBroker, startHost, startTakt, until } from './support.mjs';

const cleanups = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()();
});

async function brokerWithHost() {
  const broker = await startBroker();
  const host = await startHost(broker);
  cleanups.push(() => broker.stop(), () => host.close().catch(() => {}));
  return { broker, host };
}

async function run(options) {
  const takt = await startTakt(options);
  cleanups.push(async () => {
    await takt.stop();
    takt.remove();
  });
  return takt;
}

const bdSeqOf = (m) => num(metric(m.payload, 'bdSeq').value);

test('NDEATH after kill -9 carries the birth\'s bdSeq, and a restart births with the next one', async () => {
  const { broker, host } = await brokerWithHost();
  const first = await startTakt({ servers: [broker.url] });
  cleanups.push(async () => first.remove());
  const birth = await host.next('NBIRTH');
  assert.equal(bdSeqOf(birth), 0);
  await first.kill();
  const death = await host.next('NDEATH');
  assert.equal(bdSeqOf(death), 0, 'the will carries the session\'s bdSeq');
  assert.equal(death.payload.seq, undefined, 'NDEATH has no seq');

  const from = host.messages.length;
  const second = await startTakt({ servers: [broker.url], dir: first.dir });
  const rebirth = await host.next('NBIRTH', from);
  assert.equal(bdSeqOf(rebirth), 1, 'bdSeq is kept across restarts and goes up per session');
  // A clean stop sends NDEATH itself (a clean disconnect does not fire the will).
  const stopAt = host.messages.length;
  await second.stop();
  const cleanDeath = await host.next('NDEATH', stopAt);
  assert.equal(bdSeqOf(cleanDeath), 1);
});

test('a lost broker: the node births on the next server of the list with the next bdSeq', async () => {
  const a = await brokerWithHost();
  const b = await brokerWithHost();
  const takt = await run({ servers: [a.broker.url, b.broker.url] });
  const onA = await a.host.next('NBIRTH');
  assert.equal(bdSeqOf(onA), 0);
  assert.equal(b.host.of('NBIRTH').length, 0, 'nothing on the second broker while the first is up');
  const lost = Date.now();
  await a.broker.stop();
  const onB = await b.host.next('NBIRTH', 0, () => true, 15000);
  assert.equal(bdSeqOf(onB), 1);
  const { sparkplug } = await takt.status();
  assert.equal(sparkplug.server, b.broker.url);
  assert.match(sparkplug.reason, /connection lost/);
  assert.ok(onB.at - lost < 10000, `born on the second broker ${onB.at - lost} ms after the first was lost`);
  await b.host.next('NDATA', b.host.messages.indexOf(onB));
});

test('brokers that drop each session right after accepting it get the growing delay, not a reconnect storm', async () => {
  // Brokers that take at most 150-byte packets: they accept the connection (CONNECT with the
  // NDEATH will fits) and drop it at the NBIRTH, so every session ends within milliseconds of its
  // CONNACK, as on a clustered broker that refuses the session's subscription.
  const a = await startBroker('max_packet_size 150\n');
  const b = await startBroker('max_packet_size 150\n');
  cleanups.push(() => a.stop(), () => b.stop());
  const takt = await run({ servers: [a.url, b.url] });
  await sleep(6000);
  const sessions = (takt.output().match(/sparkplug: connected to /g) ?? []).length;
  // Rounds of two quick sessions 1 s, then 2 s apart (at 0, 1 and 3 s): 6 sessions in 6 s; without
  // the delay one every few milliseconds. The program's values change every cycle meanwhile: the
  // next round comes all the same.
  assert.ok(sessions >= 4, `the node came back for the next rounds: ${sessions} sessions in 6 s`);
  assert.ok(sessions <= 8, `${sessions} sessions in 6 s`);
  assert.match(takt.output(), /connection lost/);
});

test('each session has a client ID of its own: takt-<group>-<node>-<bdSeq>', async () => {
  const { broker, host } = await brokerWithHost();
  // A client holding the first session's ID does not keep the node off the broker: the node's
  // next session (after Next Server, on the same single broker) has another ID.
  const takt = await run({ servers: [broker.url] });
  const birth = await host.next('NBIRTH');
  const twin = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { clientId: `takt-Plant1-Line3-${bdSeqOf(birth)}`, reconnectPeriod: 0 });
  cleanups.push(() => twin.endAsync(true).catch(() => {}));
  const from = host.messages.length;
  const rebirth = await host.next('NBIRTH', from, () => true, 15000);
  assert.equal(bdSeqOf(rebirth), bdSeqOf(birth) + 1);
  assert.match(takt.output(), new RegExp(`connection lost`));
  await sleep(2500);
  assert.equal(host.of('NBIRTH').length, 2, 'the new session is not taken over by the holder of the old ID');
  assert.equal((await takt.status()).sparkplug.state, 'online');
});

test('Node Control/Next Server: NDEATH on this broker, NBIRTH on the next', async () => {
  const a = await brokerWithHost();
  const b = await brokerWithHost();
  await run({ servers: [a.broker.url, b.broker.url] });
  const onA = await a.host.next('NBIRTH');
  await a.host.ncmd('Line3', [{ name: 'Node Control/Next Server', type: 'Boolean', value: true }]);
  const death = await a.host.next('NDEATH');
  assert.equal(bdSeqOf(death), bdSeqOf(onA));
  const onB = await b.host.next('NBIRTH');
  assert.equal(bdSeqOf(onB), bdSeqOf(onA) + 1);
});

test('with primary_host_id the node publishes only while that host\'s STATE is online', async () => {
  const a = await brokerWithHost();
  const b = await brokerWithHost();
  const takt = await run({ servers: [a.broker.url, b.broker.url], toml: 'primary_host_id = "SCADA"' });
  await sleep(1500);
  assert.equal(a.host.of('NBIRTH').length, 0, 'no birth before the host is online');
  assert.match(takt.output(), /connected to tcp:\/\/127\.0\.0\.1/);
  assert.equal((await takt.status()).sparkplug.state, 'waiting_for_host');

  const t0 = Date.now();
  await a.host.state('SCADA', true, t0);
  const birth = await a.host.next('NBIRTH');
  await a.host.next('NDATA');
  // A STATE older than the last one seen is stale and changes nothing.
  await a.host.state('SCADA', false, t0 - 1000);
  await sleep(500);
  assert.equal(a.host.of('NDEATH').length, 0, 'a stale offline STATE is ignored');

  const offAt = a.host.messages.length;
  await a.host.state('SCADA', false, t0 + 1000);
  const death = await a.host.next('NDEATH', offAt);
  assert.equal(bdSeqOf(death), bdSeqOf(birth));
  await sleep(300);
  const after = a.host.messages.slice(offAt).filter((m) => m.type === 'NDATA' && m.at > death.at + 100);
  assert.equal(after.length, 0, 'no NDATA after the host went offline');

  // The node moved to the next server and waits there for the host too.
  await sleep(1000);
  assert.equal(b.host.of('NBIRTH').length, 0, 'no birth on the next server before the host is online there');
  await b.host.state('SCADA', true, t0 + 2000);
  const onB = await b.host.next('NBIRTH');
  assert.equal(bdSeqOf(onB), bdSeqOf(birth) + 1);
});

test('changes made while the host was offline follow the next birth as historical data', async () => {
  const a = await brokerWithHost();
  const takt = await run({ servers: [a.broker.url], toml: 'primary_host_id = "SCADA"' });
  const t0 = Date.now();
  await a.host.state('SCADA', true, t0);
  const birth = await a.host.next('NBIRTH');
  const counter = num(metric(birth.payload, 'P/counter').alias);
  const offAt = a.host.messages.length;
  const offline = Date.now();
  await a.host.state('SCADA', false, t0 + 1);
  await a.host.next('NDEATH', offAt);
  await sleep(1500); // P.counter goes up every 100 ms meanwhile
  const backAt = a.host.messages.length;
  const online = Date.now();
  await a.host.state('SCADA', true, t0 + 2);
  const rebirth = await a.host.next('NBIRTH', backAt);
  const at = a.host.messages.indexOf(rebirth);
  const kept = await a.host.next('NDATA', at, (m) => m.payload.metrics.some((x) => x.isHistorical));
  assert.equal(num(kept.payload.seq), 1, 'the historical data comes right after the birth');
  const values = kept.payload.metrics.filter((x) => num(x.alias) === counter);
  assert.ok(values.length >= 5, `the counter's changes while offline were kept: ${values.length}`);
  let last = -Infinity;
  for (const v of values) {
    assert.equal(v.isHistorical, true);
    const ts = num(v.timestamp);
    assert.ok(ts >= offline - 200 && ts <= online + 200, `timestamp ${ts} within the outage ${offline}..${online}`);
    assert.ok(v.value > last, 'oldest first');
    last = v.value;
  }
  assert.ok(last < num(metric(rebirth.payload, 'P/counter').value) + 1);
  assert.match(takt.output(), /changes kept while offline sent as historical data/);
});

test('changes kept while offline are bounded: the oldest are dropped first, and the loss is counted', async () => {
  const a = await brokerWithHost();
  // 300 variables changing every 10 ms cycle: far more than the 50,000 changes kept within 15 s,
  // even when the node takes a change notification only every ninth cycle.
  const names = Array.from({ length: 300 }, (_, i) => `v${i}`);
  const main = `PROGRAM Main\nVAR\n${names.map((v) => `  ${v} : DINT;`).join('\n')}\nEND_VAR\n${names.map((v) => `${v} := ${v} + 1;`).join('\n')}\nEND_PROGRAM\n`;
  const takt = await run({ servers: [a.broker.url], toml: 'primary_host_id = "SCADA"', sources: { 'main.st': main, 'config.st': kConfig } });
  const t0 = Date.now();
  await a.host.state('SCADA', true, t0);
  await a.host.next('NBIRTH');
  const offAt = a.host.messages.length;
  const offline = Date.now();
  await a.host.state('SCADA', false, t0 + 1);
  await a.host.next('NDEATH', offAt);
  await sleep(15000);
  const backAt = a.host.messages.length;
  const online = Date.now();
  await a.host.state('SCADA', true, t0 + 2);
  const rebirth = await a.host.next('NBIRTH', backAt);
  const said = await until('the count of what was kept and dropped', () =>
    /(\d+) changes kept while offline sent as historical data \((\d+) older ones dropped: at most 50000 are kept\)/.exec(takt.output()), 20000);
  assert.equal(Number(said[1]), 50000, said[0]);
  assert.ok(Number(said[2]) > 0, said[0]);
  const at = a.host.messages.indexOf(rebirth);
  const historical = () => a.host.messages.slice(at).filter((m) => m.type === 'NDATA')
    .flatMap((m) => m.payload.metrics.filter((x) => x.isHistorical));
  await until('the 50,000 kept changes at the host', () => historical().length >= 50000, 30000);
  const stamps = historical().map((x) => num(x.timestamp));
  assert.equal(stamps.length, 50000);
  for (let i = 1; i < stamps.length; ++i) {
    assert.ok(stamps[i] >= stamps[i - 1], `oldest first: ${stamps[i - 1]} then ${stamps[i]}`);
  }
  // What was dropped is the oldest: the changes kept run up to the end of the outage.
  assert.ok(stamps[0] >= offline - 200, `the earliest kept change is ${stamps[0] - offline} ms into the outage`);
  assert.ok(stamps.at(-1) >= online - 2000, `the latest kept change is ${online - stamps.at(-1)} ms before its end`);
});

test('expose limits the metrics to the variables its globs match', async () => {
  const a = await brokerWithHost();
  await run({ servers: [a.broker.url], toml: 'expose = ["P.counter", "P.s*"]' });
  const birth = await a.host.next('NBIRTH');
  const names = birth.payload.metrics.map((m) => m.name).sort();
  assert.deepEqual(names, ['Node Control/Next Server', 'Node Control/Rebirth', 'P/counter', 'P/sensor', 'P/setpoint', 'P/small', 'P/stamp', 'P/step', 'Properties/Program Hash', 'bdSeq']);
});
