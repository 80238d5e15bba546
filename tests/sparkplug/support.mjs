// What the Sparkplug tests share: real mosquitto brokers on free loopback ports, a `takt run` of a
// scratch project with [runtime.sparkplug] on them, and a Sparkplug host application made of the
// mqtt client and sparkplug-payload (Eclipse Tahu's JavaScript codec) that records every message.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mqtt from 'mqtt';
import sparkplug from 'sparkplug-payload';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');
export const codec = sparkplug.get('spBv1.0');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Polls `fn` until it returns a truthy value; the last value (or error) names what was awaited.
export async function until(what, fn, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

const accepts = (port) =>
  new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });

// A mosquitto broker on a free loopback port, anonymous, for the length of a test; `conf` adds
// lines to its configuration.
export async function startBroker(conf = '') {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-sp-broker-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n${conf}`);
  const child = spawn(process.env.TAKT_MOSQUITTO || 'mosquitto', ['-c', path.join(dir, 'mosquitto.conf')], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await until(`mosquitto on ${port}`, () => accepts(port), 10000);
  return {
    port,
    url: `tcp://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The host application's view of one broker: every spBv1.0 message, decoded, in arrival order.
export async function startHost(broker, group = 'Plant1') {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { clientId: `host-${broker.port}-${Date.now()}`, reconnectPeriod: 0 });
  const messages = [];
  client.on('message', (topic, payload) => {
    const [, , type] = topic.split('/');
    let decoded = null;
    if (!topic.startsWith('spBv1.0/STATE/')) decoded = codec.decodePayload(payload);
    messages.push({ topic, type, payload: decoded, at: Date.now() });
  });
  await client.subscribeAsync(`spBv1.0/${group}/#`, { qos: 1 });
  const of = (type) => messages.filter((m) => m.type === type);
  return {
    client,
    messages,
    of,
    // The first message of `type` after index `from` that `pred` accepts.
    next: (type, from = 0, pred = () => true, timeoutMs = 30000) =>
      until(`${type} on ${broker.url}`, () => messages.slice(from).find((m) => m.type === type && pred(m)), timeoutMs),
    ncmd: (node, metrics) =>
      client.publishAsync(`spBv1.0/${group}/NCMD/${node}`, Buffer.from(codec.encodePayload({ timestamp: Date.now(), metrics })), { qos: 0 }),
    state: (hostId, online, timestamp = Date.now()) =>
      client.publishAsync(`spBv1.0/STATE/${hostId}`, JSON.stringify({ online, timestamp }), { qos: 1, retain: true }),
    close: () => client.endAsync(),
  };
}

// Numbers of a decoded payload (protobufjs gives 64-bit values as Long).
export const num = (v) => (v !== null && typeof v === 'object' && typeof v.toNumber === 'function' ? v.toNumber() : v);
export const metric = (payload, name) => payload.metrics.find((m) => m.name === name);

export const kProgram = `PROGRAM Main
VAR
  counter : DINT;
  run : BOOL := TRUE;
  setpoint : REAL := 1.5;
  big : LINT := -5000000000;
  level : UINT := 7;
  total : LREAL := 2.25;
  label : STRING := 'line 3';
  delay : TIME := T#1500ms;
  stamp : DT := DT#2024-01-15-12:30:00;
  small : SINT := -3;
  step : INT := 0;
  mask : BYTE := 16#0F;
  flags : WORD := 16#00FF;
  wide : DWORD := 16#DEADBEEF;
  huge : LWORD := 16#FFFFFFFFFFFFFFFF;
  mode : Mode := Mode#Auto;
END_VAR
VAR CONSTANT
  limit : DINT := 100;
END_VAR
VAR
  sensor AT %IX0.0 : BOOL;
END_VAR
IF run THEN
  step := step + 1;
  IF step >= 10 THEN
    step := 0;
    counter := counter + 1;
  END_IF;
END_IF;
END_PROGRAM
`;

export const kTypes = `TYPE
  Mode : (Off := 0, Auto := 2, Manual := 5);
END_TYPE
`;

export const kConfig = `CONFIGURATION Cell
  RESOURCE Res ON PLC
    TASK Main_Task (INTERVAL := T#10ms, PRIORITY := 1);
    PROGRAM P WITH Main_Task : Main;
  END_RESOURCE
END_CONFIGURATION
`;

// A `takt run` of a project made of `sources` ({name: text} under src/) whose edge node talks to
// `servers` (urls) as Plant1/<node>; `toml` is added to [runtime.sparkplug]. `dir` reuses a
// project folder (its state: bdSeq) from an earlier run. `stop()` ends the run (SIGTERM) and
// returns its output; `kill()` ends it with SIGKILL.
export async function startTakt({ servers, node = 'Line3', toml = '', sources = { 'types.st': kTypes, 'main.st': kProgram, 'config.st': kConfig }, dir = null }) {
  const project = dir ?? mkdtempSync(path.join(tmpdir(), 'takt-sp-'));
  mkdirSync(path.join(project, 'src'), { recursive: true });
  for (const [name, text] of Object.entries(sources)) writeFileSync(path.join(project, 'src', name), text);
  writeFileSync(path.join(project, 'io.toml'), '[io]\ndriver = "loopback"\n\n[io.params]\nbytes = 4\n');
  writeFileSync(path.join(project, 'runtime.toml'), `[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.watchdog]
timeout_ms = 5000

[runtime.control]
endpoint = "unix://${project}/takt.sock"

[runtime.sparkplug]
enabled = true
servers = [${servers.map((s) => JSON.stringify(s)).join(', ')}]
group_id = "Plant1"
edge_node_id = "${node}"
${toml}
`);
  const child = spawn(takt, ['run', '--project', project], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const end = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
    const result = await exited;
    clearTimeout(timer);
    return { ...result, output };
  };
  return {
    dir: project,
    child,
    output: () => output,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    remove: () => rmSync(project, { recursive: true, force: true }),
    reload: (files) => {
      for (const [name, text] of Object.entries(files)) writeFileSync(path.join(project, 'src', name), text);
      return promisify(execFile)(takt, ['reload', '--project', project, '--yes']);
    },
    read: async (name) => {
      const { stdout } = await promisify(execFile)(takt, ['ctl', '--project', project, 'var.read', JSON.stringify({ names: [name] })]);
      return JSON.parse(stdout).values[name];
    },
    status: async () => {
      const { stdout } = await promisify(execFile)(takt, ['ctl', '--project', project, 'runtime.status']);
      return JSON.parse(stdout);
    },
    audit: () => readFileSync(path.join(project, '.takt', 'audit.log'), 'utf8'),
  };
}
