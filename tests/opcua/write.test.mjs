// Writes through the OPC UA server of `takt run`: anonymous sessions are viewers and may not
// write, a user's role decides (writing needs engineer, as var.write on the control endpoint), a
// wrong password gets no session, a value of the wrong type and a CONSTANT are refused with their
// OPC UA status, the nodes of one Write are applied at one cycle boundary each with its own status,
// and every write is in the audit log with the user's name and each variable's path.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AttributeIds, DataType, StatusCodes, UserTokenType, Variant, VariantArrayType } from 'node-opcua-client';
import { startTakt, connect, sleep } from './support.mjs';

const ENGINEER_PASSWORD = 'scada-pw-8d3f1a6c0e9b2475';
const VIEWER_PASSWORD = 'hmi-pw-5b0e7c2d9a4f1836';

// 250 variables for a Write of 250 nodes: `steps` counts the cycles in which their sum changed,
// so a Write that applies them all at one cycle boundary adds exactly 1.
const kMany = 250;
const many = Array.from({ length: kMany }, (_, k) => `v${k}`);
const kMain = `PROGRAM Main
VAR
  i : INT := 1;
  li : LINT;
  r : REAL;
  t : TIME;
  s : STRING;
  arr : ARRAY[1..3] OF DINT;
  pct : INT(0..100);
  sensor AT %IX0.0 : BOOL;
${many.map((v) => `  ${v} : DINT;`).join('\n')}
  sum : DINT;
  lastSum : DINT;
  steps : DINT;
END_VAR
VAR CONSTANT
  limit : INT := 100;
END_VAR
sum := ${many.join(' + ')};
IF sum <> lastSum THEN
  steps := steps + 1;
  lastSum := sum;
END_IF;
END_PROGRAM
`;

let takt;
let ns;
let anonymous;
let engineer;

before(async () => {
  takt = await startTakt({
    sources: { 'main.st': kMain },
    opcuaToml: `max_nodes = 1000

[[runtime.opcua.users]]
name = "scada"
role = "engineer"
password_file = "scada.pw"

[[runtime.opcua.users]]
name = "hmi"
role = "viewer"
password_file = "hmi.pw"
`,
    files: {
      'scada.pw': { text: `${ENGINEER_PASSWORD}\n`, mode: 0o600 },
      'hmi.pw': { text: `${VIEWER_PASSWORD}\n`, mode: 0o600 },
    },
  });
  anonymous = await connect(takt.endpoint);
  engineer = await connect(takt.endpoint, {
    userIdentity: { type: UserTokenType.UserName, userName: 'scada', password: ENGINEER_PASSWORD },
  });
  ns = (await anonymous.session.readNamespaceArray()).indexOf('urn:takt:cell');
  assert.ok(ns > 0);
});

after(async () => {
  for (const ua of [anonymous, engineer]) if (ua) await ua.close().catch(() => {});
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
  }
});

const node = (p) => `ns=${ns};s=${p}`;

async function write(ua, p, dataType, value, arrayType) {
  return ua.session.write({
    nodeId: node(p),
    attributeId: AttributeIds.Value,
    value: { value: new Variant({ dataType, value, arrayType: arrayType ?? VariantArrayType.Scalar }) },
  });
}

// One Write request of several nodes: [path, dataType, value] each; the status of each node.
async function writeMany(ua, nodes) {
  return ua.session.write(
    nodes.map(([p, dataType, value]) => ({
      nodeId: node(p),
      attributeId: AttributeIds.Value,
      value: { value: new Variant({ dataType, value }) },
    })),
  );
}

async function read(ua, p) {
  return (await ua.session.read({ nodeId: node(p), attributeId: AttributeIds.Value })).value.value;
}

test('an anonymous session reads but may not write', async () => {
  const status = await write(anonymous, 'Main.i', DataType.Int16, 7);
  assert.equal(status.name, StatusCodes.BadUserAccessDenied.name);
  assert.equal(await read(anonymous, 'Main.i'), 1);
});

test('an engineer writes every kind of value, applied at a cycle boundary', async () => {
  assert.equal((await write(engineer, 'Main.i', DataType.Int16, 42)).name, 'Good');
  assert.equal(await read(engineer, 'Main.i'), 42);
  // Beyond 2^53, exact.
  assert.equal((await write(engineer, 'Main.li', DataType.Int64, [0xffdfffff, 0xffffffff])).name, 'Good');
  assert.deepEqual(await read(engineer, 'Main.li'), [0xffdfffff, 0xffffffff]);
  assert.equal((await write(engineer, 'Main.r', DataType.Float, 2.5)).name, 'Good');
  assert.equal(await read(engineer, 'Main.r'), 2.5);
  assert.equal((await write(engineer, 'Main.t', DataType.Double, 250)).name, 'Good');
  assert.equal(await read(engineer, 'Main.t'), 250);
  assert.equal((await write(engineer, 'Main.s', DataType.String, 'ok')).name, 'Good');
  assert.equal(await read(engineer, 'Main.s'), 'ok');
  assert.equal((await write(engineer, 'Main.arr', DataType.Int32, [7, 8, 9], VariantArrayType.Array)).name, 'Good');
  assert.deepEqual([...(await read(engineer, 'Main.arr'))], [7, 8, 9]);
  // What others read is what was written.
  assert.equal(await read(anonymous, 'Main.i'), 42);
});

test('the wrong type, a CONSTANT and an input are refused', async () => {
  assert.equal((await write(engineer, 'Main.i', DataType.String, 'x')).name, StatusCodes.BadTypeMismatch.name);
  assert.equal((await write(engineer, 'Main.limit', DataType.Int16, 5)).name, StatusCodes.BadNotWritable.name);
  assert.equal(await read(engineer, 'Main.limit'), 100);
  // An input the program does not own (the input copy overwrites it every cycle).
  assert.equal((await write(engineer, 'Main.sensor', DataType.Boolean, true)).name, StatusCodes.BadNotWritable.name);
  assert.equal(await read(engineer, 'Main.i'), 42);
});

test('a viewer user may not write; a wrong password gets no session', async () => {
  const viewer = await connect(takt.endpoint, {
    userIdentity: { type: UserTokenType.UserName, userName: 'hmi', password: VIEWER_PASSWORD },
  });
  try {
    assert.equal((await write(viewer, 'Main.i', DataType.Int16, 5)).name, StatusCodes.BadUserAccessDenied.name);
  } finally {
    await viewer.close();
  }
  await assert.rejects(
    connect(takt.endpoint, { userIdentity: { type: UserTokenType.UserName, userName: 'scada', password: 'wrong-password-123456' } }),
    /BadUserAccessDenied|BadIdentityTokenRejected|BadIdentityTokenInvalid/,
  );
});

// The nodes of one Write are one var.writeMany: all applied at one cycle boundary, not one node a
// cycle (250 nodes took 10.9 s when each was a var.write of its own).
test('a Write of 250 nodes applies them all at one cycle boundary, in well under a second', async (t) => {
  const stepsBefore = await read(engineer, 'Main.steps');
  const t0 = Date.now();
  const statuses = await writeMany(engineer, many.map((v, k) => [`Main.${v}`, DataType.Int32, 1000 + k]));
  const ms = Date.now() - t0;
  t.diagnostic(`the Write of ${kMany} nodes took ${ms} ms`);
  assert.deepEqual(statuses.map((s) => s.name), many.map(() => 'Good'));
  assert.ok(ms < 1000, `the Write of ${kMany} nodes took ${ms} ms`);
  const values = await engineer.session.read(many.map((v) => ({ nodeId: node(`Main.${v}`), attributeId: AttributeIds.Value })));
  assert.deepEqual(values.map((d) => d.value.value), many.map((v, k) => 1000 + k));
  // The sum changed in one cycle: every value came at the same boundary.
  assert.equal(await read(engineer, 'Main.steps'), stepsBefore + 1);
});

// Per node, as OPC UA and CODESYS have it: a refused node does not refuse the others of its Write.
test('a Write of good and bad nodes answers each node with its own status and writes the good ones', async () => {
  const statuses = await writeMany(engineer, [
    ['Main.v0', DataType.Int32, 7],
    ['Main.i', DataType.String, 'x'], // the wrong type (the server's check)
    ['Main.limit', DataType.Int16, 5], // a CONSTANT
    ['Main.pct', DataType.Int16, 500], // outside INT(0..100) (the runtime's check)
    ['Main.v1', DataType.Int32, 8],
    ['Main.pct', DataType.Int16, 50],
  ]);
  assert.deepEqual(
    statuses.map((s) => s.name),
    ['Good', StatusCodes.BadTypeMismatch.name, StatusCodes.BadNotWritable.name, StatusCodes.BadOutOfRange.name, 'Good', 'Good'],
  );
  assert.equal(await read(engineer, 'Main.v0'), 7);
  assert.equal(await read(engineer, 'Main.v1'), 8);
  assert.equal(await read(engineer, 'Main.pct'), 50);
  assert.equal(await read(engineer, 'Main.limit'), 100);
  // A session that may not write: every node refused, each with the status that fits it.
  const refused = await writeMany(anonymous, [
    ['Main.v0', DataType.Int32, 1],
    ['Main.limit', DataType.Int16, 5],
    ['Main.v1', DataType.Int32, 2],
  ]);
  assert.deepEqual(refused.map((s) => s.name), [StatusCodes.BadUserAccessDenied.name, StatusCodes.BadNotWritable.name, StatusCodes.BadUserAccessDenied.name]);
  assert.equal(await read(engineer, 'Main.v0'), 7);
});

test('the audit log names the OPC UA user of each write and each variable written', async () => {
  const audit = readFileSync(path.join(takt.dir, '.takt', 'audit.log'), 'utf8');
  assert.match(audit, /peer=opcua:scada role=engineer method=var\.writeMany ok/);
  assert.match(audit, /peer=opcua:scada role=engineer method=var\.writeMany name=Main\.v249 ok/);
  assert.match(audit, /peer=opcua:scada role=engineer method=var\.writeMany name=Main\.pct error=-32602/);
  assert.match(audit, /peer=opcua:anonymous role=viewer method=var\.writeMany error=-32011/);
  assert.match(audit, /peer=opcua:hmi role=viewer method=var\.writeMany error=-32011/);
});

// Logins go through the control endpoint's login path: a wrong password is an auth.login line in
// the audit log naming the user and the client's address, and from the fifth failure on the
// client's address waits (1 s, then 2 s, …) with every login refused, the right password too,
// as a control client's token guesses are (docs/control.md "Sessions, tokens and roles").
test('wrong passwords are audited with the user and the client, and back off like the control endpoint', async () => {
  const login = (password) =>
    connect(takt.endpoint, { userIdentity: { type: UserTokenType.UserName, userName: 'scada', password } });
  const refused = /BadUserAccessDenied|BadIdentityTokenRejected|BadIdentityTokenInvalid/;
  // The wrong password of the test before is the first failure.
  for (let i = 0; i < 4; i++) {
    await assert.rejects(login(`wrong-password-${i}`), refused);
  }
  // Five failures: the address waits 1 s, and the right password is refused meanwhile.
  await assert.rejects(login(ENGINEER_PASSWORD), refused);
  await sleep(1200);
  const back = await login(ENGINEER_PASSWORD);
  await back.close();
  const audit = readFileSync(path.join(takt.dir, '.takt', 'audit.log'), 'utf8');
  assert.match(audit, /peer=opcua:scada@(::ffff:)?127\.0\.0\.1:\d+ role=none method=auth\.login error=-32010/);
  assert.match(audit, /peer=opcua:scada@(::ffff:)?127\.0\.0\.1:\d+ role=none method=auth\.login error=-32005/);
  assert.match(audit, /peer=opcua:scada@(::ffff:)?127\.0\.0\.1:\d+ role=engineer method=auth\.login ok/);
});
