// Deadbands ([runtime.sparkplug] deadband and [[runtime.sparkplug.deadbands]]): a ramp moving by
// 0.1 per cycle with an absolute deadband of 1.0 is carried by about one NDATA in ten cycles, each
// time with the exact value the program had (its copy, without a deadband, is in the same NDATA);
// a counter whose override is 0 is carried every time; the first matching override wins.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { kConfig, metric, num, startBroker, startHost, startTakt, until } from './support.mjs';

const kRamp = `PROGRAM Main
VAR
  n : DINT;
  ramp : LREAL;
  copy : LREAL;
END_VAR
n := n + 1;
ramp := DINT_TO_LREAL(n) * 0.1;
copy := ramp;
END_PROGRAM
`;

let broker;
let host;
let takt;

before(async () => {
  broker = await startBroker();
  host = await startHost(broker);
  takt = await startTakt({
    servers: [broker.url],
    sources: { 'main.st': kRamp, 'config.st': kConfig },
    toml: 'deadband = 1.0\n\n[[runtime.sparkplug.deadbands]]\nexpose = "P.n"\nabsolute = 0\n\n' +
      '[[runtime.sparkplug.deadbands]]\nexpose = "P.copy"\nabsolute = 0\n\n' +
      '[[runtime.sparkplug.deadbands]]\nexpose = "P.co*"\nabsolute = 5\n',
  });
});

after(async () => {
  const { output } = await takt.stop();
  takt.remove();
  await host.close();
  await broker.stop();
  if (process.env.TAKT_SPARKPLUG_VERBOSE) console.log(output);
});

test('a ramp of 0.1 per cycle with deadband 1.0: sent about every 10 cycles, each value exact', async () => {
  const birthMsg = await host.next('NBIRTH');
  const birth = birthMsg.payload;
  const from = host.messages.indexOf(birthMsg);
  const nAlias = num(metric(birth, 'P/n').alias);
  const rampAlias = num(metric(birth, 'P/ramp').alias);
  const nOf = (m) => m.payload.metrics.find((x) => num(x.alias) === nAlias);
  const rampOf = (m) => m.payload.metrics.find((x) => num(x.alias) === rampAlias);
  const copyAlias = num(metric(birth, 'P/copy').alias);
  const copyOf = (m) => m.payload.metrics.find((x) => num(x.alias) === copyAlias);
  const data = () => host.messages.slice(from).filter((m) => m.type === 'NDATA');
  await until('15 NDATA carrying the ramp', () => data().filter(rampOf).length >= 15, 60000);
  const all = data();
  let lastSent = metric(birth, 'P/ramp').value;
  const firstN = num(metric(birth, 'P/n').value);
  let lastN = firstN;
  let sends = 0;
  for (const m of all) {
    const n = nOf(m);
    assert.ok(n, 'the counter (deadband 0) is in every NDATA: it changes every cycle');
    assert.ok(copyOf(m), 'so is the copy: the first matching override (0) wins over P.co* (5)');
    lastN = num(n.value);
    const r = rampOf(m);
    if (!r) continue;
    ++sends;
    assert.equal(r.value, copyOf(m).value, 'the value the program had at that cycle, exactly');
    assert.ok(Math.abs(r.value - num(n.value) / 10) < 1e-9, `the ramp of cycle ${num(n.value)}: ${r.value}`);
    assert.ok(r.value - lastSent > 1.0, `moved by more than 1.0 since the last sent (${lastSent} -> ${r.value})`);
    assert.ok(r.value - lastSent < 3.0, `sent once it moved beyond the deadband (${lastSent} -> ${r.value})`);
    lastSent = r.value;
  }
  const cycles = lastN - firstN;
  const perSend = cycles / sends;
  assert.ok(perSend >= 10 && perSend <= 20, `${cycles} cycles, ${sends} NDATA with the ramp: one per ${perSend.toFixed(1)}`);
  assert.ok(all.length >= sends * 5, `${all.length} NDATA, ${sends} with the ramp`);
});
