// An online change under a running OPC UA server: the session stays open, a variable the new
// program adds appears and reads, a removed one goes Bad for its monitored item and disappears,
// and a GeneralModelChangeEvent is sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  AttributeIds,
  ClientMonitoredItem,
  ClientSubscription,
  StatusCodes,
  TimestampsToReturn,
  constructEventFilter,
} from 'node-opcua-client';
import { startTakt, connect, takt as taktBin, until } from './support.mjs';

const kBefore = `PROGRAM Main
VAR
  counter : UDINT;
  old_var : INT := 3;
END_VAR
counter := counter + 1;
END_PROGRAM
`;

const kAfter = `PROGRAM Main
VAR
  counter : UDINT;
  added : DINT := 77;
  more : LREAL := 1.25;
END_VAR
counter := counter + 1;
END_PROGRAM
`;

let takt;
let ua;
let ns;

before(async () => {
  takt = await startTakt({ sources: { 'main.st': kBefore } });
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
const readStatus = async (p) => ua.session.read({ nodeId: node(p), attributeId: AttributeIds.Value });

test('a session open across an online change reads what it added; removed nodes go Bad and disappear', async () => {
  const sessionId = ua.session.sessionId.toString();
  assert.equal((await readStatus('Main.old_var')).value.value, 3);
  assert.equal((await readStatus('Main.added')).statusCode.value, StatusCodes.BadNodeIdUnknown.value);

  const sub = await ClientSubscription.create(ua.session, {
    requestedPublishingInterval: 50,
    requestedLifetimeCount: 1000,
    requestedMaxKeepAliveCount: 20,
    publishingEnabled: true,
  });
  try {
    const removed = [];
    const old = ClientMonitoredItem.create(
      sub,
      { nodeId: node('Main.old_var'), attributeId: AttributeIds.Value },
      { samplingInterval: 0, queueSize: 10, discardOldest: true },
      TimestampsToReturn.Both,
    );
    old.on('changed', (dv) => removed.push(dv.statusCode));
    const events = [];
    const server = ClientMonitoredItem.create(
      sub,
      { nodeId: 'ns=0;i=2253', attributeId: AttributeIds.EventNotifier },
      { queueSize: 100, discardOldest: true, filter: constructEventFilter(['EventType', 'Changes']) },
      TimestampsToReturn.Both,
    );
    server.on('changed', (fields) => events.push(fields));
    await until('the removed variable monitored', async () => removed.length > 0, 5000);

    writeFileSync(path.join(takt.dir, 'src', 'main.st'), kAfter);
    await promisify(execFile)(taktBin, ['reload', '--project', takt.dir, '--yes']);

    // The same session: the added variables appear and read their initial values.
    const added = await until('Main.added to appear', async () => {
      const dv = await readStatus('Main.added');
      return dv.statusCode.value === StatusCodes.Good.value ? dv : null;
    }, 15000);
    assert.equal(added.value.value, 77);
    assert.equal((await readStatus('Main.more')).value.value, 1.25);
    assert.equal(ua.session.sessionId.toString(), sessionId);

    // The removed one is gone: Bad for its monitored item, unknown to reads and browsing.
    assert.equal((await readStatus('Main.old_var')).statusCode.value, StatusCodes.BadNodeIdUnknown.value);
    await until('the removed variable to go Bad', async () => removed.some((s) => !s.isGood()), 5000);
    const members = (await ua.session.browse(node('Main'))).references.map((r) => r.browseName.name).sort();
    assert.deepEqual(members, ['added', 'counter', 'more']);

    // One GeneralModelChangeEvent (ns=0;i=2133) for the change.
    await until('a GeneralModelChangeEvent', async () => events.some((f) => f[0].value && f[0].value.toString() === 'ns=0;i=2133'), 5000);
    // The counter kept its value across the change and goes on.
    const c1 = (await readStatus('Main.counter')).value.value;
    await until('the counter to go on', async () => (await readStatus('Main.counter')).value.value > c1, 5000);
  } finally {
    await sub.terminate();
  }
});
