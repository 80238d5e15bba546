// The address space of the OPC UA server of `takt run`, browsed and read by node-opcua's client:
// every IEC elementary type with its OPC UA type and value, arrays, STRUCTs and FB instances as
// objects, NodeIds ns=<namespace_uri's index>;s=<path>, values that follow the running program.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AttributeIds, DataType, StatusCodes, NodeClass } from 'node-opcua-client';
import { startTakt, connect, until } from './support.mjs';

const kTypes = `TYPE
  Mode : (Off, Manual, Auto);
  Level : (Low := 10, High := 20);
  Point : STRUCT
    x : REAL;
    label : STRING[8];
  END_STRUCT;
END_TYPE
`;

const kMain = `FUNCTION_BLOCK Pulse
VAR_INPUT
  enable : BOOL;
END_VAR
VAR
  ticks : UDINT;
END_VAR
IF enable THEN
  ticks := ticks + 1;
END_IF;
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  b : BOOL := TRUE;
  si : SINT := -8;
  i : INT := -1234;
  di : DINT := -123456;
  li : LINT := -9007199254740993;
  usi : USINT := 200;
  ui : UINT := 60000;
  udi : UDINT := 4000000000;
  uli : ULINT := 18446744073709551615;
  byt : BYTE := 16#AB;
  w : WORD := 16#BEEF;
  dw : DWORD := 16#DEADBEEF;
  lw : LWORD := 16#0123456789ABCDEF;
  r : REAL := 1.5;
  lr : LREAL := -2.25;
  s : STRING := 'hello';
  ws : WSTRING := "wide";
  tm : TIME := T#1s500ms;
  dat : DATE := D#2024-01-15;
  tday : TOD := TOD#12:30:00;
  dtm : DT := DT#2024-01-15-12:30:00;
  mode : Mode := Mode#Auto;
  level : Level := Level#High;
  modes : ARRAY[0..1] OF Mode := [Mode#Manual, Mode#Off];
  arr : ARRAY[0..3] OF INT := [1, 2, 3, 4];
  p : Point := (x := 0.5, label := 'P1');
  pulse : Pulse;
  counter : UDINT;
END_VAR
counter := counter + 1;
pulse(enable := TRUE);
END_PROGRAM
`;

let takt;
let ua;
let ns;

before(async () => {
  takt = await startTakt({
    sources: { 'types.st': kTypes, 'main.st': kMain },
    opcuaToml: 'namespace_uri = "urn:test:cell"\n',
  });
  ua = await connect(takt.endpoint);
  const namespaces = await ua.session.readNamespaceArray();
  ns = namespaces.indexOf('urn:test:cell');
  assert.ok(ns > 0, `urn:test:cell is in the namespace array ${namespaces}`);
});

after(async () => {
  if (ua) await ua.close();
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
    assert.match(output, /OPC UA server starting/);
  }
});

async function read(path) {
  const dv = await ua.session.read({ nodeId: `ns=${ns};s=${path}`, attributeId: AttributeIds.Value });
  assert.equal(dv.statusCode.value, StatusCodes.Good.value, `${path}: ${dv.statusCode.toString()}`);
  return dv.value;
}

test('every IEC elementary type reads as its OPC UA type', async () => {
  const expected = [
    ['b', DataType.Boolean, true],
    ['si', DataType.SByte, -8],
    ['i', DataType.Int16, -1234],
    ['di', DataType.Int32, -123456],
    ['usi', DataType.Byte, 200],
    ['ui', DataType.UInt16, 60000],
    ['udi', DataType.UInt32, 4000000000],
    ['byt', DataType.Byte, 0xab],
    ['w', DataType.UInt16, 0xbeef],
    ['dw', DataType.UInt32, 0xdeadbeef],
    ['r', DataType.Float, 1.5],
    ['lr', DataType.Double, -2.25],
    ['s', DataType.String, 'hello'],
    ['ws', DataType.String, 'wide'],
    ['tm', DataType.Double, 1500],
    ['tday', DataType.Double, 12.5 * 3600 * 1000],
    ['mode', DataType.Int32, 2],
  ];
  for (const [name, dataType, value] of expected) {
    const v = await read(`Main.${name}`);
    assert.equal(v.dataType, dataType, `Main.${name}: ${DataType[v.dataType]}`);
    assert.equal(v.value, value, `Main.${name}`);
  }
  // 64-bit integers exactly, beyond a double's 2^53 (node-opcua: [high, low] 32-bit words).
  const li = await read('Main.li');
  assert.equal(li.dataType, DataType.Int64);
  assert.equal(BigInt.asIntN(64, (BigInt(li.value[0]) << 32n) | BigInt(li.value[1])), -9007199254740993n);
  const uli = await read('Main.uli');
  assert.equal(uli.dataType, DataType.UInt64);
  assert.deepEqual(uli.value, [0xffffffff, 0xffffffff]);
  const lw = await read('Main.lw');
  assert.equal(lw.dataType, DataType.UInt64);
  assert.deepEqual(lw.value, [0x01234567, 0x89abcdef]);
  // Dates as DateTime (UTC).
  const d = await read('Main.dat');
  assert.equal(d.dataType, DataType.DateTime);
  assert.equal(d.value.toISOString(), '2024-01-15T00:00:00.000Z');
  const dt = await read('Main.dtm');
  assert.equal(dt.value.toISOString(), '2024-01-15T12:30:00.000Z');
});

// The value of a property of `path` by its browse name (HasProperty references).
async function property(path, name) {
  const browsed = await ua.session.browse({
    nodeId: `ns=${ns};s=${path}`,
    referenceTypeId: 'HasProperty',
    browseDirection: 0,
    includeSubtypes: true,
    resultMask: 63,
  });
  const ref = browsed.references.find((r) => r.browseName.name === name);
  assert.ok(ref, `${path} has the property ${name}: ${browsed.references.map((r) => r.browseName.toString())}`);
  assert.equal(ref.browseName.namespaceIndex, 0, `${name} is the standard property`);
  const dv = await ua.session.read({ nodeId: ref.nodeId, attributeId: AttributeIds.Value });
  assert.equal(dv.statusCode.value, StatusCodes.Good.value, `${path}.${name}: ${dv.statusCode.toString()}`);
  return dv.value;
}

test('an enumeration is an Int32 with its EnumStrings, or its EnumValues when it has values of its own', async () => {
  const mode = await read('Main.mode');
  assert.equal(mode.dataType, DataType.Int32);
  assert.equal(mode.value, 2);
  const strings = await property('Main.mode', 'EnumStrings');
  assert.equal(strings.dataType, DataType.LocalizedText);
  assert.deepEqual([...strings.value].map((t) => t.text), ['Off', 'Manual', 'Auto']);
  assert.equal(strings.value[mode.value].text, 'Auto'); // the value indexes its name

  const modes = await read('Main.modes');
  assert.deepEqual([...modes.value], [1, 0]);
  assert.deepEqual([...(await property('Main.modes', 'EnumStrings')).value].map((t) => t.text), ['Off', 'Manual', 'Auto']);

  const level = await read('Main.level');
  assert.equal(level.dataType, DataType.Int32);
  assert.equal(level.value, 20);
  const values = await property('Main.level', 'EnumValues');
  assert.deepEqual(
    [...values.value].map((e) => [Number(e.value[1] ?? e.value), e.displayName.text]),
    [[10, 'Low'], [20, 'High']],
  );
});

test('arrays are array variables, STRUCTs and FB instances objects', async () => {
  const arr = await read('Main.arr');
  assert.equal(arr.dataType, DataType.Int16);
  assert.deepEqual([...arr.value], [1, 2, 3, 4]);
  const rank = await ua.session.read({ nodeId: `ns=${ns};s=Main.arr`, attributeId: AttributeIds.ValueRank });
  assert.equal(rank.value.value, 1);

  assert.equal((await read('Main.p.x')).value, 0.5);
  assert.equal((await read('Main.p.label')).value, 'P1');
  const p = await ua.session.read({ nodeId: `ns=${ns};s=Main.p`, attributeId: AttributeIds.NodeClass });
  assert.equal(p.value.value, NodeClass.Object);

  const browsed = await ua.session.browse(`ns=${ns};s=Main.pulse`);
  const names = browsed.references.map((r) => r.browseName.name).sort();
  assert.deepEqual(names, ['enable', 'ticks']);
});

test('browsing from Objects reaches the program through the resource folder', async () => {
  const objects = await ua.session.browse('ns=0;i=85');
  const cell = objects.references.find((r) => r.browseName.name === 'cell');
  assert.ok(cell, `cell under Objects: ${objects.references.map((r) => r.browseName.name)}`);
  const programs = await ua.session.browse(cell.nodeId);
  assert.deepEqual(programs.references.map((r) => r.browseName.name), ['Main']);
  const main = await ua.session.browse(programs.references[0].nodeId);
  const members = main.references.map((r) => r.browseName.name);
  for (const m of ['b', 'li', 'arr', 'p', 'pulse', 'counter']) {
    assert.ok(members.includes(m), `${m} in ${members}`);
  }
});

test('a read is the running value: the counter moves and a ULINT stays exact', async () => {
  const first = (await read('Main.counter')).value;
  const later = await until('the counter to move', async () => {
    const v = (await read('Main.counter')).value;
    return v > first ? v : 0;
  }, 10000);
  assert.ok(later > first);
  assert.equal((await read('Main.pulse.ticks')).value > 0, true);
});

test('runtime.status has the server; killed, it is started again and serves the same nodes', async () => {
  const before = await takt.status();
  assert.equal(before.opcua.state, 'running', JSON.stringify(before.opcua));
  assert.equal(before.opcua.restarts, 0);
  assert.match(before.opcua.endpoint, /^opc\.tcp:\/\/127\.0\.0\.1:\d+/);
  assert.ok(before.opcua.pid > 0);
  await ua.close().catch(() => {});
  ua = undefined;
  process.kill(before.opcua.pid, 'SIGKILL');
  const after = await until('the server started again', async () => {
    const s = await takt.status();
    return s.opcua.state === 'running' && s.opcua.restarts === 1 ? s : null;
  });
  assert.notEqual(after.opcua.pid, before.opcua.pid);
  assert.equal(after.opcua.reason, 'killed by signal 9 (Killed)');
  assert.match(takt.output(), /opcua: the server process killed by signal 9 \(Killed\); starting it again in 1000 ms/);
  ua = await connect(takt.endpoint);
  const v = await ua.session.read({ nodeId: `ns=${ns};s=Main.i`, attributeId: AttributeIds.Value });
  assert.equal(v.value.value, -1234);
});
