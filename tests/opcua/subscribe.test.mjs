// Subscriptions to the OPC UA server of `takt run`, with node-opcua's client: monitored items are
// fed by the runtime's change stream (var.subscribe on the private channel), not by a var.read per
// item and sample; a running counter's values arrive in order and none twice; deadbands hold back
// small changes; the runtime's state is a node that follows the runtime.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  AttributeIds,
  ClientMonitoredItem,
  ClientSubscription,
  DataChangeFilter,
  DataChangeTrigger,
  DeadbandType,
  StatusCodes,
  TimestampsToReturn,
} from 'node-opcua-client';
import { startTakt, connect, sleep, takt as taktBin, until } from './support.mjs';

const kMain = `PROGRAM Main
VAR
  counter : UDINT;
  level : DINT;
  pct : INT(0..1000);
  divisor : INT := 1;
  quotient : INT;
END_VAR
counter := counter + 1;
level := level + 1;
pct := (pct + 1) MOD 1000;
quotient := 100 / divisor;
END_PROGRAM
`;

let takt;
let ua;
let ns;

before(async () => {
  takt = await startTakt({ sources: { 'main.st': kMain } });
  ua = await connect(takt.endpoint);
  ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:cell');
  assert.ok(ns > 0);
});

after(async () => {
  if (ua) await ua.close().catch(() => {});
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
  }
});

const node = (p) => `ns=${ns};s=${p}`;

async function subscription() {
  return ClientSubscription.create(ua.session, {
    requestedPublishingInterval: 50,
    requestedLifetimeCount: 1000,
    requestedMaxKeepAliveCount: 20,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
    priority: 1,
  });
}

// The values a monitored item of `nodeId` reports for `ms` milliseconds.
async function monitor(sub, nodeId, { samplingInterval = 0, filter = null, ms = 2000, queueSize = 1000 } = {}) {
  const item = ClientMonitoredItem.create(
    sub,
    { nodeId, attributeId: AttributeIds.Value },
    { samplingInterval, discardOldest: true, queueSize, filter },
    TimestampsToReturn.Both,
  );
  const values = [];
  item.on('changed', (dv) => values.push(dv));
  await new Promise((resolve, reject) => {
    item.once('initialized', resolve);
    item.once('err', reject);
  });
  await sleep(ms);
  await item.terminate();
  return values;
}

const auditLines = () => readFileSync(path.join(takt.dir, '.takt', 'audit.log'), 'utf8').split('\n');
const readsOf = (lines) => lines.filter((l) => /peer=opcua:anonymous .*method=var\.read /.test(l)).length;

test('a running counter: every value in order, none twice, no read per sample', async () => {
  const sub = await subscription();
  const readsBefore = readsOf(auditLines());
  try {
    const values = await monitor(sub, node('Main.counter'), { samplingInterval: 0, ms: 3000 });
    const numbers = values.map((dv) => {
      assert.equal(dv.statusCode.value, StatusCodes.Good.value, dv.statusCode.toString());
      return dv.value.value;
    });
    // The cycle is 10 ms and the change stream samples every 10 ms: some 300 cycles, a value for
    // most of them (a sample that finds two cycles' changes reports the later one).
    assert.ok(numbers.length >= 60, `${numbers.length} values in 3 s: ${numbers.slice(0, 20)}`);
    for (let i = 1; i < numbers.length; i++) {
      assert.ok(numbers[i] > numbers[i - 1], `value ${i}: ${numbers[i]} after ${numbers[i - 1]}`);
    }
    const steps = numbers.slice(1).map((n, i) => n - numbers[i]);
    const ones = steps.filter((d) => d === 1).length;
    assert.ok(ones >= steps.length / 4, `steps of one cycle: ${ones} of ${steps.length}`);
  } finally {
    await sub.terminate();
  }
  // The values came from the change stream: at most the first one was a read.
  await sleep(300);
  const reads = readsOf(auditLines()) - readsBefore;
  assert.ok(reads <= 1, `${reads} var.read calls while subscribed`);
  assert.ok(auditLines().some((l) => /peer=opcua:server role=viewer method=var\.subscribe ok/.test(l)));
});

test('a sampling interval takes the latest value at that interval', async () => {
  const sub = await subscription();
  try {
    // Asked for 50 ms: publish_interval_ms (100 by default) is the shortest granted.
    await until('the revised publishing interval', async () => sub.publishingInterval === 100, 3000);
    const values = await monitor(sub, node('Main.counter'), { samplingInterval: 200, ms: 2000 });
    const numbers = values.map((dv) => dv.value.value);
    assert.ok(numbers.length >= 5 && numbers.length <= 14, `${numbers.length} values at 200 ms in 2 s`);
    for (let i = 1; i < numbers.length; i++) {
      assert.ok(numbers[i] > numbers[i - 1]);
    }
    const steps = numbers.slice(1).map((n, i) => n - numbers[i]);
    assert.ok(Math.max(...steps) >= 10, `steps ${steps}: a sample every 200 ms skips cycles`);
  } finally {
    await sub.terminate();
  }
});

test('an absolute deadband holds back changes no larger than it', async () => {
  const sub = await subscription();
  try {
    const filter = new DataChangeFilter({
      trigger: DataChangeTrigger.StatusValue,
      deadbandType: DeadbandType.Absolute,
      deadbandValue: 25,
    });
    const [banded, all] = await Promise.all([
      monitor(sub, node('Main.level'), { filter, ms: 2500 }),
      monitor(sub, node('Main.level'), { ms: 2500 }),
    ]);
    const numbers = banded.map((dv) => dv.value.value);
    assert.ok(numbers.length >= 3, `${numbers.length} values past the deadband`);
    for (let i = 1; i < numbers.length; i++) {
      assert.ok(numbers[i] - numbers[i - 1] > 25, `${numbers[i]} after ${numbers[i - 1]}: within the deadband`);
    }
    assert.ok(all.length > numbers.length * 5, `without the deadband ${all.length}, with it ${numbers.length}`);
  } finally {
    await sub.terminate();
  }
});

test('a percent deadband is a percentage of a subrange, its EURange; refused without one', async () => {
  const sub = await subscription();
  try {
    const range = await ua.session.browse(node('Main.pct'));
    assert.ok(range.references.some((r) => r.browseName.name === 'EURange'), 'Main.pct has an EURange');
    const filter = new DataChangeFilter({
      trigger: DataChangeTrigger.StatusValue,
      deadbandType: DeadbandType.Percent,
      deadbandValue: 5, // of 0..1000: 50
    });
    const numbers = (await monitor(sub, node('Main.pct'), { filter, ms: 3000 })).map((dv) => dv.value.value);
    assert.ok(numbers.length >= 3, `${numbers.length} values past the deadband: ${numbers}`);
    for (let i = 1; i < numbers.length; i++) {
      assert.ok(Math.abs(numbers[i] - numbers[i - 1]) > 50, `${numbers[i]} after ${numbers[i - 1]}: within 5 %`);
    }
    await assert.rejects(monitor(sub, node('Main.level'), { filter, ms: 100 }), /BadMonitoredItemFilterUnsupported|BadFilterNotAllowed/);
  } finally {
    await sub.terminate();
  }
});

test('the runtime state, cycles and faults are nodes; State and Fault follow a stop, a start and a fault', async () => {
  const read = async (name) => {
    const dv = await ua.session.read({ nodeId: node(`#Runtime.${name}`), attributeId: AttributeIds.Value });
    assert.equal(dv.statusCode.value, StatusCodes.Good.value, `${name}: ${dv.statusCode.toString()}`);
    return dv.value.value;
  };
  assert.equal(await read('State'), 'running');
  assert.equal(await read('Fault'), '');
  assert.match(await read('ProgramHash'), /^[0-9a-f]{16,}$/);
  const cycles = async () => {
    const [high, low] = await read('Cycles');
    return high * 2 ** 32 + low;
  };
  const first = await cycles();
  await until('the cycle count to move', async () => (await cycles()) > first, 5000);

  const sub = await subscription();
  const item = ClientMonitoredItem.create(
    sub,
    { nodeId: node('#Runtime.State'), attributeId: AttributeIds.Value },
    { samplingInterval: 0, discardOldest: true, queueSize: 10 },
    TimestampsToReturn.Both,
  );
  const states = [];
  item.on('changed', (dv) => states.push(dv.value.value));
  try {
    await until('the first state', async () => states.length > 0, 5000);
    const ctl = (method) => promisify(execFile)(taktBin, ['ctl', '--project', takt.dir, method]);
    await ctl('runtime.stop');
    await until('State to say stopped', async () => states.includes('stopped'), 10000);
    await ctl('runtime.start');
    await until('State to say running again', async () => states.lastIndexOf('running') > states.indexOf('stopped'), 10000);
    // A division by zero halts the program: State and Fault say so, Faults counts it.
    assert.equal(await read('Faults'), 0);
    await promisify(execFile)(taktBin, ['write', '--project', takt.dir, 'Main.divisor', '0']);
    const fault = await until('the fault', async () => await read('Fault'), 10000);
    assert.match(fault, /division or MOD by zero/);
    assert.match(fault, /in Main line \d+/);
    assert.equal(await read('Faults'), 1);
    await until('State to say faulted', async () => states[states.length - 1] === 'faulted', 10000);
    assert.equal(await read('State'), 'faulted');
    await promisify(execFile)(taktBin, ['write', '--project', takt.dir, 'Main.divisor', '1']);
    await ctl('runtime.restart');
    await until('State to say running after the restart', async () => (await read('State')) === 'running' && states[states.length - 1] === 'running', 10000);
    assert.equal(await read('Fault'), '');
  } finally {
    await sub.terminate();
  }
});
