// Basic256Sha256 with SignAndEncrypt: the server's certificate is made on its first start, a client
// whose certificate the server does not trust gets no channel (its certificate lands in the
// server's rejected folder), and once an operator moves it into trusted/certs the same client
// connects and reads; as it does when a script moves the certificate the moment it appears.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AttributeIds, MessageSecurityMode, OPCUAClient, SecurityPolicy, StatusCodes } from 'node-opcua-client';
import { OPCUACertificateManager } from 'node-opcua-certificate-manager';
import { startTakt, until } from './support.mjs';

const kMain = `PROGRAM Main
VAR
  i : INT := 12;
END_VAR
END_PROGRAM
`;

let takt;
const clientPkis = [];

// A folder for a client's own PKI: each one makes the client a certificate of its own.
function newClientPki() {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-opcua-client-pki-'));
  clientPkis.push(dir);
  return dir;
}

before(async () => {
  takt = await startTakt({
    sources: { 'main.st': kMain },
    opcuaToml: 'security_policy = "basic256sha256"\nsecurity_mode = "sign_and_encrypt"\n',
  });
});

after(async () => {
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
  }
  for (const dir of clientPkis) rmSync(dir, { recursive: true, force: true });
});

async function secureSession(clientPki) {
  const clientCertificateManager = new OPCUACertificateManager({
    rootFolder: clientPki,
    automaticallyAcceptUnknownCertificate: true, // the client trusts the server: only the server's side is under test
  });
  const client = OPCUAClient.create({
    applicationName: 'takt-opcua-security-test',
    applicationUri: 'urn:takt:test:security-client',
    clientCertificateManager,
    securityMode: MessageSecurityMode.SignAndEncrypt,
    securityPolicy: SecurityPolicy.Basic256Sha256,
    endpointMustExist: false,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
  });
  try {
    await client.connect(takt.endpoint);
    const session = await client.createSession();
    return { client, session };
  } catch (err) {
    await client.disconnect().catch(() => {});
    throw err;
  }
}

const kRefused = /BadCertificateUntrusted|BadSecurityChecksFailed|socket has been disconnected|Connection|closed/i;

async function readsI({ client, session }) {
  try {
    const dv = await session.read({ nodeId: `ns=2;s=Main.i`, attributeId: AttributeIds.Value });
    assert.equal(dv.statusCode.value, StatusCodes.Good.value);
    assert.equal(dv.value.value, 12);
  } finally {
    await session.close();
    await client.disconnect();
  }
}

test('an untrusted client certificate is refused, a trusted one reads', async () => {
  const pki = path.join(takt.dir, '.takt', 'opcua', 'pki');
  assert.ok(existsSync(path.join(pki, 'own', 'certs')), 'the server made its certificate');
  const clientPki = newClientPki();

  await assert.rejects(secureSession(clientPki), kRefused);
  const rejected = path.join(pki, 'rejected');
  const files = await until('the client certificate in rejected/', async () => {
    const list = existsSync(rejected) ? readdirSync(rejected).filter((f) => f.endsWith('.pem') || f.endsWith('.der')) : [];
    return list.length > 0 ? list : null;
  }, 10000);

  // The operator's step: the rejected certificate moves to trusted/certs.
  const trusted = path.join(pki, 'trusted', 'certs');
  mkdirSync(trusted, { recursive: true });
  for (const f of files) renameSync(path.join(rejected, f), path.join(trusted, f));

  await readsI(await until('the trusted client to connect', async () => secureSession(clientPki), 60000));
});

// The server indexes a refused certificate at once but learns its file's name from a file watcher;
// a certificate moved out of rejected/ before the watcher saw it stayed refused from memory until
// the server restarted. Moving it the moment the file appears is what hit that.
test('a certificate moved to trusted/ the moment it is refused is trusted', async () => {
  const pki = path.join(takt.dir, '.takt', 'opcua', 'pki');
  const rejected = path.join(pki, 'rejected');
  const trusted = path.join(pki, 'trusted', 'certs');
  mkdirSync(rejected, { recursive: true });
  mkdirSync(trusted, { recursive: true });
  const moved = [];
  const watcher = watch(rejected, () => {
    for (const f of readdirSync(rejected)) {
      if (!f.endsWith('.pem') && !f.endsWith('.der')) continue;
      try {
        renameSync(path.join(rejected, f), path.join(trusted, f));
        moved.push(f);
      } catch {
        // moved by an earlier event
      }
    }
  });
  try {
    const clientPki = newClientPki();
    // The server refuses the certificate (it lands in rejected/); the move may come before the
    // server answers, and then this first attempt is already let in.
    const first = await secureSession(clientPki).catch((err) => {
      assert.match(err.message, kRefused);
      return null;
    });
    if (first) await readsI(first);
    await until('the refused certificate to be moved', async () => moved.length > 0, 10000);
    await readsI(await until('the trusted client to connect', async () => secureSession(clientPki), 20000));
  } finally {
    watcher.close();
  }
});
