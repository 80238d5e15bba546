// A server process that hangs while it starts, before it listens, is ended and started again like
// one that hangs while it runs (docs/opcua.md "How it runs"): one that never answers the runtime's
// liveness ping within 30 s of its start, and one that answers but does not say it listens within
// 60 s. Each is a stand-in (TAKT_OPCUA_DIR) that misbehaves on its first start and is the real
// server on the next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startTakt, connect, realServer, standIn, until, waitForRestart } from './support.mjs';

const kProgram = `PROGRAM Main
VAR
  counter : UDINT;
END_VAR
counter := counter + 1;
END_PROGRAM
`;

// `firstStart` is what the stand-in does on its first start; on the next it is the real server.
const twoFaced = (firstStart) => `'use strict';
const fs = require('fs');
const path = require('path');
const marker = path.join(__dirname, 'started');
if (fs.existsSync(marker)) {
  require(${JSON.stringify(realServer)});
} else {
  fs.writeFileSync(marker, String(process.pid));
  ${firstStart}
}
`;

// Stopped before it reads a line: no ping is ever answered.
const kStoppedAtOnce = twoFaced(`process.kill(process.pid, 'SIGSTOP');`);

// Answers every ping from its event loop, but never gets to listening.
const kNeverReady = twoFaced(`const { Channel } = require(${JSON.stringify(realServer.replace(/server\.js$/, 'channel.js'))});
  const channel = new Channel(3);
  channel.on('opcua.ping', () => channel.notify('opcua.health', { sessions: 0, subscriptions: 0, monitored_items: 0 }));`);

async function hangsWhileStarting(t, script, reason, boundMs) {
  const dir = standIn(script);
  const takt = await startTakt({ sources: { 'main.st': kProgram }, env: { TAKT_OPCUA_DIR: dir }, listening: false });
  const t0 = Date.now();
  try {
    // While it hangs, runtime.status says it is starting (not running), and /metrics's up is 0.
    const starting = await until('the first process started', async () => {
      const { opcua } = await takt.status();
      return opcua.pid > 0 ? opcua : null;
    }, 20000);
    assert.equal(starting.state, 'starting');
    assert.equal(starting.restarts, 0);
    const after = await waitForRestart(takt, { timeoutMs: boundMs + 45000 });
    const ms = Date.now() - t0;
    t.diagnostic(`running again ${ms} ms after takt run started`);
    assert.notEqual(after.pid, starting.pid);
    assert.equal(after.reason, reason);
    // (takt run starts the process a moment before its control endpoint answers)
    assert.ok(ms >= boundMs - 5000, `restarted after ${ms} ms, before the ${boundMs} ms bound`);
    assert.throws(() => process.kill(starting.pid, 0), /ESRCH/, 'the hung process is gone');
    // The same back-off as a process that died or hung while running.
    assert.match(takt.output(), new RegExp(`opcua: the server process ${reason}; starting it again in 1000 ms`));
    const ua = await connect(takt.endpoint);
    await ua.close();
  } finally {
    await takt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a server process that answers no liveness ping while it starts is ended and started again', async (t) => {
  await hangsWhileStarting(t, kStoppedAtOnce, 'did not answer the liveness ping within 30 s of its start', 30000);
});

test('a server process that answers the ping but does not get ready is ended and started again', async (t) => {
  await hangsWhileStarting(t, kNeverReady, 'did not get ready within 60 s of its start', 60000);
});
