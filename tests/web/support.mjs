// What the browser tests of the live page share: a `takt run` of a scratch copy of examples/demo
// with [runtime.web] and control tokens, the takt shell commands against it, and Debian's
// headless Chromium driven by playwright-core (no browser download).
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync, appendFileSync, readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');
export const chromiumPath = process.env.TAKT_CHROMIUM || '/usr/bin/chromium';
export const ENGINEER_TOKEN = 'engineer-web-4b1d7e93c2a8f056';
export const VIEWER_TOKEN = 'viewer-web-9e2c51a7d03b84f6';

const run = promisify(execFile);

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` until it returns a truthy value; the last value (or error) names what was awaited.
export async function until(what, fn, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

// A running demo with the page on a free loopback port (`auth` of [runtime.web]: local or
// token), a Unix control endpoint and an engineer and a viewer token (`extraToml` is appended
// to runtime.toml); the shell commands find both through runtime.toml.
export async function startDemo({ auth = 'local', extraToml = '', extraFiles = {} } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-web-'));
  cpSync(path.join(repo, 'examples/demo'), dir, { recursive: true });
  for (const [name, text] of Object.entries(extraFiles)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'engineer.token'), `${ENGINEER_TOKEN}\n`, { mode: 0o600 });
  writeFileSync(path.join(dir, 'viewer.token'), `${VIEWER_TOKEN}\n`, { mode: 0o600 });
  const port = await freePort();
  // The demo's 50 ms watchdog halts the runtime when a cycle is late, which an ASan build on a
  // loaded 2-core machine can be: a halted runtime freezes every value and failed these tests
  // for a reason that is not the page's. The page is under test here, not the watchdog.
  const toml = readFileSync(path.join(dir, 'runtime.toml'), 'utf8')
    .replace(/endpoint = ".*"/, `endpoint = "unix://${dir}/takt.sock"`)
    .replace(/timeout_ms = 50\b/, 'timeout_ms = 5000');
  writeFileSync(path.join(dir, 'runtime.toml'), toml);
  appendFileSync(path.join(dir, 'runtime.toml'), `
[[runtime.control.tokens]]
role = "engineer"
token_file = "engineer.token"

[[runtime.control.tokens]]
role = "viewer"
token_file = "viewer.token"

[runtime.web]
listen = "127.0.0.1:${port}"
auth = "${auth}"
${extraToml}`);
  const child = spawn(takt, ['run', '--project', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await until(`takt run to serve the page on ${port}\n${log}`, async () => {
    if (child.exitCode !== null) throw new Error(`takt run exited ${child.exitCode}: ${log}`);
    return portOpen(port);
  });
  return {
    dir,
    url: `http://127.0.0.1:${port}/`,
    log: () => log,
    // A takt shell command against this runtime (the engineer token of runtime.toml).
    async takt(...args) {
      const { stdout } = await run(takt, [...args, '--project', dir], { timeout: 60000 });
      return stdout;
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// JSON-RPC through POST /api/rpc, as the page sends it: {status, body}.
export async function rpc(url, method, params = {}, bearer = '') {
  const headers = { 'Content-Type': 'application/json' };
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const res = await fetch(new URL('api/rpc', url), {
    method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: await res.json() };
}

export function haveChromium() {
  return existsSync(chromiumPath);
}

export async function launchBrowser() {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
}

// A page on `url`; with `token`, logged in through the page's own form.
export async function openPage(browser, url, token = '') {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  if (token) {
    await page.fill('#token', token);
    await page.click('#login button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#role').textContent !== 'viewer');
  }
  return { page, errors, close: () => context.close() };
}

// Shows only the variable `name` in the page's tree and returns its row.
export async function showVariable(page, name) {
  await page.fill('#search', name);
  const row = page.locator(`#vars tr[data-path="${name}"]`);
  await row.waitFor();
  return row;
}
