// Basic256Sha256 with SignAndEncrypt: the server's certificate is made on its first start, a client
// whose certificate the server does not trust gets no channel (its certificate lands in the
// server's rejected folder), and once an operator moves it into trusted/certs the same client
// connects and reads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
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
let clientPki;

before(async () => {
  takt = await startTakt({
    sources: { 'main.st': kMain },
    opcuaToml: 'security_policy = "basic256sha256"\nsecurity_mode = "sign_and_encrypt"\n',
  });
  clientPki = mkdtempSync(path.join(tmpdir(), 'takt-opcua-client-pki-'));
});

after(async () => {
  if (takt) {
    const { code, output } = await takt.stop();
    assert.equal(code, 0, output);
  }
  if (clientPki) rmSync(clientPki, { recursive: true, force: true });
});

async function secureSession() {
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

test('an untrusted client certificate is refused, a trusted one reads', async () => {
  const pki = path.join(takt.dir, '.takt', 'opcua', 'pki');
  assert.ok(existsSync(path.join(pki, 'own', 'certs')), 'the server made its certificate');

  await assert.rejects(secureSession(), /BadCertificateUntrusted|BadSecurityChecksFailed|socket has been disconnected|Connection|closed/i);
  const rejected = path.join(pki, 'rejected');
  const files = await until('the client certificate in rejected/', async () => {
    const list = existsSync(rejected) ? readdirSync(rejected).filter((f) => f.endsWith('.pem') || f.endsWith('.der')) : [];
    return list.length > 0 ? list : null;
  }, 10000);

  // The operator's step: the rejected certificate moves to trusted/certs.
  const trusted = path.join(pki, 'trusted', 'certs');
  mkdirSync(trusted, { recursive: true });
  for (const f of files) renameSync(path.join(rejected, f), path.join(trusted, f));

  const { client, session } = await until('the trusted client to connect', async () => secureSession().catch(() => null), 60000);
  try {
    const dv = await session.read({ nodeId: `ns=2;s=Main.i`, attributeId: AttributeIds.Value });
    assert.equal(dv.statusCode.value, StatusCodes.Good.value);
    assert.equal(dv.value.value, 12);
  } finally {
    await session.close();
    await client.disconnect();
  }
});
