// Writes through the OPC UA server of `takt run`: anonymous sessions are viewers and may not
// write, a user's role decides (writing needs engineer, as var.write on the control endpoint), a
// wrong password gets no session, a value of the wrong type and a CONSTANT are refused with their
// OPC UA status, and every write is in the audit log with the user's name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AttributeIds, DataType, StatusCodes, UserTokenType, Variant, VariantArrayType } from 'node-opcua-client';
import { startTakt, connect, sleep } from './support.mjs';

const ENGINEER_PASSWORD = 'scada-pw-8d3f1a6c0e9b2475';
const VIEWER_PASSWORD = 'hmi-pw-5b0e7c2d9a4f1836';

const kMain = `PROGRAM Main
VAR
  i : INT := 1;
  li : LINT;
  r : REAL;
  t : TIME;
  s : STRING;
  arr : ARRAY[1..3] OF DINT;
END_VAR
VAR CONSTANT
  limit : INT := 100;
END_VAR
END_PROGRAM
`;

let takt;
let ns;
let anonymous;
let engineer;

before(async () => {
  takt = await startTakt({
    sources: { 'main.st': kMain },
    opcuaToml: `
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

test('the wrong type and a CONSTANT are refused', async () => {
  assert.equal((await write(engineer, 'Main.i', DataType.String, 'x')).name, StatusCodes.BadTypeMismatch.name);
  assert.equal((await write(engineer, 'Main.limit', DataType.Int16, 5)).name, StatusCodes.BadNotWritable.name);
  assert.equal(await read(engineer, 'Main.limit'), 100);
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

test('the audit log names the OPC UA user of each write', async () => {
  const audit = readFileSync(path.join(takt.dir, '.takt', 'audit.log'), 'utf8');
  assert.match(audit, /peer=opcua:scada role=engineer method=var\.write ok/);
  assert.match(audit, /peer=opcua:anonymous role=viewer method=var\.write error=-32011/);
  assert.match(audit, /peer=opcua:hmi role=viewer method=var\.write error=-32011/);
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
