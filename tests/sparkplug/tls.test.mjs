// The edge node over TLS (`ssl://` servers, [runtime.sparkplug] tls = { ca, cert, key }): a real
// mosquitto whose TLS listener asks every client for a certificate signed by the test's CA, with
// a plain listener beside it for the host application. With the CA and a client certificate the
// node births; without a client certificate, or trusting another CA than the broker's, it gets
// no session and says why in runtime.status; `takt fleet status` over the same listener too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, sleep, startBroker, startHost, startTakt, takt as taktBin, until } from './support.mjs';

let pki;
let broker;
let host;
let tlsUrl;

// A CA, and a certificate signed by it for `cn` (with `san` as its subjectAltName when given).
function makeCa(name) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=takt-test-${name}`,
    '-keyout', path.join(pki, `${name}.key`), '-out', path.join(pki, `${name}.pem`)], { stdio: 'ignore' });
}
function makeSigned(name, ca, cn, san) {
  const base = path.join(pki, name);
  execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${base}.key`, '-out', `${base}.csr`], { stdio: 'ignore' });
  const ext = `${base}.ext`;
  writeFileSync(ext, san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
  execFileSync('openssl', ['x509', '-req', '-in', `${base}.csr`, '-CA', path.join(pki, `${ca}.pem`), '-CAkey', path.join(pki, `${ca}.key`),
    '-CAcreateserial', '-days', '1', '-extfile', ext, '-out', `${base}.pem`], { stdio: 'ignore' });
}

before(async () => {
  pki = mkdtempSync(path.join(tmpdir(), 'takt-sp-tls-'));
  makeCa('ca');
  makeCa('stranger');
  makeSigned('broker', 'ca', '127.0.0.1', 'IP:127.0.0.1');
  makeSigned('line3', 'ca', 'Line3');
  const tlsPort = await freePort();
  tlsUrl = `ssl://127.0.0.1:${tlsPort}`;
  // Run as root, mosquitto would switch to its own user before loading the key; `user root`
  // keeps it. The options after the second listener are that listener's.
  broker = await startBroker(`user root
listener ${tlsPort} 127.0.0.1
cafile ${pki}/ca.pem
certfile ${pki}/broker.pem
keyfile ${pki}/broker.key
require_certificate true
`);
  await until(`the TLS listener on ${tlsPort}`, async () => {
    try {
      execFileSync('openssl', ['s_client', '-connect', `127.0.0.1:${tlsPort}`, '-CAfile', `${pki}/ca.pem`,
        '-cert', `${pki}/line3.pem`, '-key', `${pki}/line3.key`], { input: '', stdio: ['pipe', 'ignore', 'ignore'], timeout: 5000 });
      return true;
    } catch {
      return false;
    }
  }, 10000);
  host = await startHost(broker);
});

after(async () => {
  await host?.close().catch(() => {});
  await broker?.stop();
  if (pki) rmSync(pki, { recursive: true, force: true });
});

async function node(tls, name) {
  return startTakt({ servers: [tlsUrl], node: name, toml: `tls = { ${tls} }\n` });
}

test('with the CA and a client certificate the node births over ssl://', async () => {
  const takt = await node(`ca = "${pki}/ca.pem", cert = "${pki}/line3.pem", key = "${pki}/line3.key"`, 'Tls1');
  try {
    const birth = await host.next('NBIRTH', 0, (m) => m.topic.endsWith('/Tls1'));
    assert.equal(birth.topic, 'spBv1.0/Plant1/NBIRTH/Tls1');
    const { sparkplug } = await takt.status();
    assert.equal(sparkplug.state, 'online', JSON.stringify(sparkplug));
    assert.equal(sparkplug.server, tlsUrl);
    await host.next('NDATA', 0, (m) => m.topic.endsWith('/Tls1'));

    // `takt fleet status` over the same listener hears it with a client certificate of its own
    // (the node's here), and says why it cannot when it trusts another CA.
    const fleet = (tls) => promisify(execFile)(taktBin, ['fleet', 'status', '--servers', tlsUrl, '--group', 'Plant1', '--timeout', '1500ms', '--json', ...tls]);
    const { stdout } = await fleet(['--ca', `${pki}/ca.pem`, '--cert', `${pki}/line3.pem`, '--key', `${pki}/line3.key`]);
    assert.equal(JSON.parse(stdout).nodes.find((n) => n.edge_node_id === 'Tls1')?.state, 'online', stdout);
    const stranger = await fleet(['--ca', `${pki}/stranger.pem`, '--cert', `${pki}/line3.pem`, '--key', `${pki}/line3.key`]).catch((err) => err);
    assert.equal(stranger.code, 15, stranger.stderr);
    assert.match(stranger.stderr, new RegExp(`${tlsUrl}: .*certificate verify failed`));
  } finally {
    const { code, output } = await takt.stop();
    takt.remove();
    assert.equal(code, 0, output);
  }
});

// Refused sessions: runtime.status names the failure, and nothing of the node reaches the host.
async function refused(tls, name) {
  const takt = await node(tls, name);
  try {
    const health = await until(`a refused session of ${name}`, async () => {
      const { sparkplug } = await takt.status();
      return sparkplug.reason ? sparkplug : null;
    }, 20000);
    assert.notEqual(health.state, 'online', JSON.stringify(health));
    await sleep(500);
    assert.deepEqual(host.messages.filter((m) => m.topic.endsWith(`/${name}`)).map((m) => m.topic), []);
    return health;
  } finally {
    const { code, output } = await takt.stop();
    takt.remove();
    assert.equal(code, 0, output);
  }
}

test('without a client certificate the broker refuses the node', async () => {
  const health = await refused(`ca = "${pki}/ca.pem"`, 'Tls2');
  // OpenSSL's reason when the broker's alert was read, else what takt adds to libmosquitto's
  // "Protocol error" (which of the two depends on when the broker's refusal arrives).
  assert.match(health.reason, /alert certificate required|no client certificate was offered/, JSON.stringify(health));
});

test('a broker whose certificate the CA did not sign is refused, and the reason says so', async () => {
  const health = await refused(`ca = "${pki}/stranger.pem", cert = "${pki}/line3.pem", key = "${pki}/line3.key"`, 'Tls3');
  assert.match(health.reason, /certificate verify failed/, JSON.stringify(health));
});
