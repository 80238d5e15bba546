// The edge node of `takt run` seen by a Sparkplug host application: what it births, what it
// sends by exception, what NCMD does, and what an online change does.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { codec, kConfig, kProgram, metric, num, sleep, startBroker, startHost, startTakt, until } from './support.mjs';

let broker;
let host;
let takt;
let birth; // the first NBIRTH

before(async () => {
  broker = await startBroker();
  host = await startHost(broker);
  takt = await startTakt({ servers: [broker.url] });
  birth = (await host.next('NBIRTH')).payload;
});

after(async () => {
  const { output } = await takt.stop();
  takt.remove();
  await host.close();
  await broker.stop();
  if (process.env.TAKT_SPARKPLUG_VERBOSE) console.log(output);
});

const aliasOf = (name) => num(metric(birth, name).alias);

test('NBIRTH carries every variable with its datatype, an alias and its value, bdSeq and Node Control', () => {
  assert.equal(num(birth.seq), 0);
  const expect = {
    'P/counter': 'Int32',
    'P/run': 'Boolean',
    'P/setpoint': 'Float',
    'P/big': 'Int64',
    'P/level': 'UInt16',
    'P/total': 'Double',
    'P/label': 'String',
    'P/delay': 'Int64',
    'P/stamp': 'DateTime',
    'P/small': 'Int8',
    'P/step': 'Int16',
    'P/limit': 'Int32',
    'P/sensor': 'Boolean',
    'P/mask': 'UInt8',
    'P/flags': 'UInt16',
    'P/wide': 'UInt32',
    'P/huge': 'UInt64',
    'P/mode': 'Int32',
  };
  for (const [name, type] of Object.entries(expect)) {
    const m = metric(birth, name);
    assert.ok(m, `${name} in the birth: ${birth.metrics.map((x) => x.name).join(', ')}`);
    assert.equal(m.type, type, name);
    assert.ok(m.alias !== undefined, `${name} has an alias`);
  }
  assert.equal(metric(birth, 'P/run').value, true);
  assert.equal(metric(birth, 'P/setpoint').value, 1.5);
  assert.equal(num(metric(birth, 'P/big').value), -5000000000);
  assert.equal(metric(birth, 'P/level').value, 7);
  assert.equal(metric(birth, 'P/total').value, 2.25);
  assert.equal(metric(birth, 'P/label').value, 'line 3');
  assert.equal(num(metric(birth, 'P/delay').value), 1500);
  assert.equal(num(metric(birth, 'P/stamp').value), Date.UTC(2024, 0, 15, 12, 30, 0));
  assert.equal(metric(birth, 'P/small').value, -3);
  assert.equal(metric(birth, 'P/limit').value, 100);
  assert.equal(metric(birth, 'P/mask').value, 0x0f);
  assert.equal(metric(birth, 'P/flags').value, 0xff);
  assert.equal(num(metric(birth, 'P/wide').value), 0xdeadbeef);
  assert.equal(metric(birth, 'P/huge').value.toString(), '18446744073709551615');
  assert.equal(metric(birth, 'P/mode').value, 2, 'an enumeration\'s number');
  assert.deepEqual(metric(birth, 'P/mode').properties, { Text: { type: 'String', value: 'Auto' } });
  const bdSeq = metric(birth, 'bdSeq');
  assert.equal(bdSeq.type, 'Int64');
  assert.equal(num(bdSeq.value), 0); // a fresh state directory
  assert.equal(metric(birth, 'Node Control/Rebirth').type, 'Boolean');
  assert.equal(metric(birth, 'Node Control/Rebirth').value, false);
  assert.equal(metric(birth, 'Node Control/Next Server').type, 'Boolean');
  const aliases = birth.metrics.filter((m) => m.alias !== undefined).map((m) => num(m.alias));
  assert.equal(new Set(aliases).size, aliases.length, 'aliases are unique');
});

test('runtime.status says the node is online, where, with which bdSeq', async () => {
  const { sparkplug } = await takt.status();
  assert.equal(sparkplug.state, 'online');
  assert.equal(sparkplug.server, broker.url);
  assert.equal(sparkplug.bd_seq, 0);
  assert.ok(sparkplug.births >= 1);
});

test('NBIRTH carries the running program\'s hash as Properties/Program Hash, which NCMD cannot write', async () => {
  const hash = metric(birth, 'Properties/Program Hash');
  assert.ok(hash, 'the birth has Properties/Program Hash');
  assert.equal(hash.type, 'String');
  assert.ok(hash.alias !== undefined, 'it has an alias like every metric of the birth');
  assert.equal(hash.value, (await takt.status()).program_hash);
  await host.ncmd('Line3', [{ name: 'Properties/Program Hash', type: 'String', value: 'x' }]);
  await until('refusal logged', () => takt.output().includes('Properties/Program Hash is read-only'));
});

test('NDATA carries only what changed, by alias, with seq counting on from the birth', async () => {
  const from = host.messages.indexOf(host.of('NBIRTH')[0]);
  await until('20 NDATA', () => host.messages.slice(from).filter((m) => m.type === 'NDATA').length >= 20);
  const data = host.messages.slice(from).filter((m) => m.type === 'NDATA' || m.type === 'NBIRTH');
  let seq = 0;
  const counter = aliasOf('P/counter');
  const step = aliasOf('P/step');
  let lastCounter = num(metric(birth, 'P/counter').value);
  let counters = 0;
  for (const m of data.slice(1, 21)) {
    seq = (seq + 1) % 256;
    assert.equal(m.type, 'NDATA');
    assert.equal(num(m.payload.seq), seq);
    for (const x of m.payload.metrics) {
      assert.equal(x.name, undefined, 'NDATA names metrics by alias alone');
      assert.ok([counter, step].includes(num(x.alias)), `only changing metrics: alias ${num(x.alias)}`);
      if (num(x.alias) === counter) {
        assert.notEqual(x.value, lastCounter, 'a value is sent when it changed');
        lastCounter = x.value;
        ++counters;
      }
    }
  }
  assert.ok(counters >= 1, 'the counter changed at least once in 20 NDATA');
});

test('NCMD writes variables by name and by alias through var.write, audited as sparkplug', async () => {
  const from = host.messages.length;
  await host.ncmd('Line3', [{ name: 'P/setpoint', type: 'Float', value: 4.25 }]);
  await host.next('NDATA', from, (m) => m.payload.metrics.some((x) => num(x.alias) === aliasOf('P/setpoint') && x.value === 4.25));
  await host.ncmd('Line3', [{ alias: aliasOf('P/level'), type: 'UInt16', value: 42 }]);
  await host.next('NDATA', from, (m) => m.payload.metrics.some((x) => num(x.alias) === aliasOf('P/level') && x.value === 42));
  await host.ncmd('Line3', [{ name: 'P/label', type: 'String', value: 'from SCADA' }]);
  await until('P.label written', async () => (await takt.read('P.label')).value === 'from SCADA');
  assert.equal((await takt.read('P.level')).value, 42);
  assert.match(takt.audit(), new RegExp(`peer=sparkplug:127\\.0\\.0\\.1:${broker.port} role=engineer method=var\\.write ok`));
});

test('NCMD to a CONSTANT or an input is refused, logged and audited, and nothing of it is written', async () => {
  const auditBefore = takt.audit().split('\n').length;
  await host.ncmd('Line3', [
    { name: 'P/run', type: 'Boolean', value: false },
    { name: 'P/limit', type: 'Int32', value: 5 },
  ]);
  await host.ncmd('Line3', [
    { name: 'P/run', type: 'Boolean', value: false },
    { name: 'P/sensor', type: 'Boolean', value: true },
  ]);
  await until('two refusals logged', () => takt.output().includes('P/limit is a CONSTANT') && takt.output().includes('P/sensor is an input'));
  // The audit log writes a repeated rejection once and then sums it up ("repeated N times").
  const refused = takt.audit().split('\n').slice(auditBefore - 1).filter((l) => /peer=sparkplug:\S+ role=engineer method=var\.write error=-32602/.test(l));
  assert.ok(refused.length >= 1, takt.audit());
  await sleep(300);
  assert.equal((await takt.read('P.run')).value, true, 'the other write of the refused command was not made');
  assert.equal((await takt.read('P.limit')).value, 100);
});

test('bit strings and enumerations are written by NCMD; NDATA gives an enumeration\'s Text', async () => {
  const from = host.messages.length;
  await host.ncmd('Line3', [
    { name: 'P/flags', type: 'UInt16', value: 0x1234 },
    { name: 'P/mode', type: 'Int32', value: 5 },
  ]);
  const data = await host.next('NDATA', from, (m) => m.payload.metrics.some((x) => num(x.alias) === aliasOf('P/mode')));
  const mode = data.payload.metrics.find((x) => num(x.alias) === aliasOf('P/mode'));
  assert.equal(mode.value, 5);
  assert.deepEqual(mode.properties, { Text: { type: 'String', value: 'Manual' } });
  assert.equal((await takt.read('P.flags')).value, 0x1234);
  assert.equal((await takt.read('P.mode')).variant, 'Manual');
  await host.ncmd('Line3', [{ name: 'P/mode', type: 'Int32', value: 3 }]);
  await until('refusal logged', () => /NCMD write of P\/mode refused/.test(takt.output()));
  assert.equal((await takt.read('P.mode')).variant, 'Manual', 'nothing written');
  await host.ncmd('Line3', [{ name: 'P/mask', type: 'UInt8', value: 256 }]);
  await until('refusal logged', () => /NCMD refused: out_of_range on P\/mask/.test(takt.output()));
});

test('NCMD that does not decode against the birth is refused with its code', async () => {
  await host.ncmd('Line3', [{ name: 'P/counter', type: 'String', value: 'x' }]);
  await until('refusal logged', () => /NCMD refused: datatype_mismatch on P\/counter/.test(takt.output()));
  await host.ncmd('Line3', [{ name: 'P/nothing', type: 'Int32', value: 1 }]);
  await until('refusal logged', () => /NCMD refused: unknown_metric on P\/nothing/.test(takt.output()));
});

test('Node Control/Rebirth gives a new NBIRTH with seq 0 and the same bdSeq', async () => {
  const from = host.messages.length;
  await host.ncmd('Line3', [{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }]);
  const again = (await host.next('NBIRTH', from)).payload;
  assert.equal(num(again.seq), 0);
  assert.equal(num(metric(again, 'bdSeq').value), num(metric(birth, 'bdSeq').value));
  assert.equal(metric(again, 'P/setpoint').value, 4.25, 'the birth has the current values');
  const at = host.messages.findIndex((m) => m.payload === again);
  const next = await host.next('NDATA', at);
  assert.equal(num(next.payload.seq), 1, 'seq counts on from the new birth');
});

test('an online change publishes a new NBIRTH with the new metric set', async () => {
  const from = host.messages.length;
  const program = kProgram.replace('  step : INT := 0;\n', '  step : INT := 0;\n  extra : UDINT := 77;\n');
  await takt.reload({ 'main.st': program, 'config.st': kConfig });
  const reborn = (await host.next('NBIRTH', from)).payload;
  const extra = metric(reborn, 'P/extra');
  assert.ok(extra, 'the new variable is a metric');
  assert.equal(extra.type, 'UInt32');
  assert.equal(extra.value, 77);
  assert.equal(num(reborn.seq), 0);
  assert.equal(metric(reborn, 'P/setpoint').value, 4.25, 'kept across the online change');
  const hash = metric(reborn, 'Properties/Program Hash').value;
  assert.notEqual(hash, metric(birth, 'Properties/Program Hash').value, 'the new program\'s hash');
  assert.equal(hash, (await takt.status()).program_hash);
  assert.ok(codec, 'sparkplug-payload decoded every message');
});
