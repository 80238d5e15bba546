// examples/opcua, a truST-style project with [runtime.opcua], run as it is (on a free port and
// its own control socket): its exposed nodes are served, the tank's level moves, an anonymous
// session reads and may not write, and what `expose` leaves out is not there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AttributeIds, DataType, StatusCodes, Variant } from 'node-opcua-client';
import { repo, runProject, connect, freePort, until } from './support.mjs';

let takt;
let ua;

after(async () => {
  if (ua) await ua.close().catch(() => {});
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
  }
});

test('the example project serves its exposed nodes', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-opcua-example-'));
  cpSync(path.join(repo, 'examples', 'opcua'), dir, { recursive: true });
  const port = await freePort();
  const toml = readFileSync(path.join(dir, 'runtime.toml'), 'utf8');
  assert.match(toml, /listen = "127\.0\.0\.1:4840"/);
  writeFileSync(
    path.join(dir, 'runtime.toml'),
    toml.replaceAll('127.0.0.1:4840', `127.0.0.1:${port}`).replace('unix:///tmp/takt-opcua-example.sock', `unix://${dir}/takt.sock`),
  );
  takt = await runProject(dir, port);
  ua = await connect(takt.endpoint);
  const ns = (await ua.session.readNamespaceArray()).indexOf('urn:takt:tank');
  assert.ok(ns > 0);
  const read = async (p) => {
    const dv = await ua.session.read({ nodeId: `ns=${ns};s=${p}`, attributeId: AttributeIds.Value });
    assert.equal(dv.statusCode.value, StatusCodes.Good.value, `${p}: ${dv.statusCode.toString()}`);
    return dv.value;
  };
  const main = await ua.session.browse(`ns=${ns};s=Main`);
  const names = main.references.map((r) => r.browseName.name);
  for (const n of ['mode', 'level', 'setpointHigh', 'pump', 'alarms', 'pumpStarts', 'fillRate']) {
    assert.ok(names.includes(n), `${n} in ${names}`);
  }
  assert.equal((await read('Main.mode')).dataType, DataType.Int32);
  assert.equal((await read('Main.alarms.high')).value, false);
  const first = (await read('Main.level')).value;
  await until('the level to move', async () => Math.abs((await read('Main.level')).value - first) > 0.5, 20000);
  const write = await ua.session.write({
    nodeId: `ns=${ns};s=Main.setpointHigh`,
    attributeId: AttributeIds.Value,
    value: { value: new Variant({ dataType: DataType.Float, value: 90 }) },
  });
  assert.equal(write.name, StatusCodes.BadUserAccessDenied.name);
});
