// What the OPC UA tests share: a `takt run` of a scratch project with [runtime.opcua] on a free
// loopback port, and node-opcua's client against it.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { OPCUAClient, MessageSecurityMode, SecurityPolicy } from 'node-opcua-client';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');

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
export async function until(what, fn, timeoutMs = 60000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

// A `takt run` of a project made of `sources` ({name: text} under src/) with the OPC UA server on a
// free loopback port; `opcuaToml` is added to its [runtime.opcua]. Resolves once the server
// answers; `stop()` ends the run and returns its output. `env` is added to takt's environment;
// `detached` runs it in a process group of its own, as a shell runs a command; `stdin` is what
// it reads ('ignore': /dev/null, 'pipe').
export async function startTakt({ sources, opcuaToml = '', files = {}, env = {}, detached = false, stdin = 'ignore', listening = true }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-opcua-'));
  mkdirSync(path.join(dir, 'src'));
  for (const [name, text] of Object.entries(sources)) writeFileSync(path.join(dir, 'src', name), text);
  for (const [name, { text, mode }] of Object.entries(files)) writeFileSync(path.join(dir, name), text, { mode });
  const port = await freePort();
  writeFileSync(path.join(dir, 'io.toml'), '[io]\ndriver = "loopback"\n\n[io.params]\nbytes = 4\n');
  writeFileSync(path.join(dir, 'runtime.toml'), `[resource]
name = "cell"
cycle_interval_ms = 10

[runtime.watchdog]
timeout_ms = 5000

[runtime.control]
endpoint = "unix://${dir}/takt.sock"

[runtime.opcua]
enabled = true
listen = "127.0.0.1:${port}"
${opcuaToml}
`);
  return runProject(dir, port, { env, detached, stdin, listening });
}

// `takt run` of the project folder `dir` whose OPC UA server listens on 127.0.0.1:`port`, as
// startTakt describes; `stop()` removes the folder. With `listening` false it resolves once the
// control endpoint answers, not waiting for the server. `wrap` is a command that execs takt with
// its arguments (['taskset', '-c', '0-3']), so the child's pid is takt's.
export async function runProject(dir, port, { env = {}, detached = false, stdin = 'ignore', listening = true, wrap = [] } = {}) {
  const argv = [...wrap, takt, 'run', '--project', dir];
  const child = spawn(argv[0], argv.slice(1), { stdio: [stdin, 'pipe', 'pipe'], env: { ...process.env, ...env }, detached });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const endpoint = `opc.tcp://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
    const result = await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
    return { ...result, output };
  };
  const ready = () => (listening ? output.includes('opcua: listening on') : existsSync(path.join(dir, 'takt.sock')));
  try {
    const end = Date.now() + 60000;
    while (!ready()) {
      if (child.exitCode !== null) throw new Error(`takt run ended: ${output}`);
      if (Date.now() > end) throw new Error(`no OPC UA server at ${endpoint} after 60 s: ${output}`);
      await sleep(200);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  // runtime.status through the control endpoint, as `takt ctl` answers it.
  const status = async () => {
    const { stdout } = await promisify(execFile)(takt, ['ctl', '--project', dir, 'runtime.status']);
    return JSON.parse(stdout);
  };
  return { dir, port, endpoint, stop, status, output: () => output, child };
}

// A folder that `takt run` takes for the server (TAKT_OPCUA_DIR): `script` as its server.js, and an
// empty node_modules/node-opcua. A stand-in may require() the real server (realServer) to become it.
export const realServer = path.join(repo, 'opcua', 'server.js');
export function standIn(script) {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-opcua-standin-'));
  mkdirSync(path.join(dir, 'node_modules', 'node-opcua'), { recursive: true });
  writeFileSync(path.join(dir, 'server.js'), script);
  return dir;
}

// The server process as runtime.status shows it (`opcua`) once it runs again after its
// `restarts`th start, within `timeoutMs`.
export async function waitForRestart(takt, { restarts = 1, timeoutMs = 60000 } = {}) {
  return until(
    `the server running again after ${restarts} restart(s)`,
    async () => {
      const { opcua } = await takt.status();
      return opcua.state === 'running' && opcua.restarts === restarts ? opcua : null;
    },
    timeoutMs,
  );
}

// A session of node-opcua's client on `endpoint` (anonymous unless `userIdentity` is given).
export async function connect(endpoint, { userIdentity } = {}) {
  const client = OPCUAClient.create({
    applicationName: 'takt-opcua-test',
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    endpointMustExist: false,
    connectionStrategy: { maxRetry: 2, initialDelay: 200, maxDelay: 1000 },
  });
  await client.connect(endpoint);
  let session;
  try {
    session = await client.createSession(userIdentity);
  } catch (err) {
    await client.disconnect(); // a refused session leaves no connection behind
    throw err;
  }
  return {
    client,
    session,
    close: async () => {
      await session.close();
      await client.disconnect();
    },
  };
}
