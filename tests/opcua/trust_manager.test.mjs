// opcua/trust.js on the certificate manager the server runs (node-opcua's, from opcua/node_modules),
// with its real folders and file watchers: a certificate the operator moves to trusted/certs stays
// there, whatever the server's checks of it are doing at that moment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repo, until } from './support.mjs';

// The server's own copies: the manager class of opcua/server.js and its trust.js.
const serverRequire = createRequire(path.join(repo, 'opcua', 'server.js'));
const { OPCUACertificateManager } = serverRequire('node-opcua');
const { followTrustFolders } = serverRequire('./trust.js');

// A self-signed client certificate with the key usages OPC UA asks for; its DER bytes. (The
// manager's PKI sets OPENSSL_CONF for its own openssl runs; the system's configuration is used.)
function certificate(dir) {
  const env = { ...process.env };
  delete env.OPENSSL_CONF;
  const pem = path.join(dir, 'client.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=client',
    '-addext', 'keyUsage=digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment',
    '-addext', 'subjectAltName=URI:urn:takt:test:client',
    '-keyout', path.join(dir, 'client.key'), '-out', pem], { stdio: ['ignore', 'ignore', 'pipe'], env });
  return execFileSync('openssl', ['x509', '-in', pem, '-outform', 'DER'], { env });
}

const certificatesIn = (folder) => (existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.pem')) : []);

// node-opcua files a refused certificate in rejected/ after its check (rejectCertificate, under the
// PKI's file lock), deciding from its index where the certificate is. When the operator moved the
// certificate to trusted/certs between the check and the filing, and the manager's file watchers
// had seen the move, the filing found it trusted and moved it back to rejected/; had they seen only
// half of it, it wrote a copy to rejected/. Either way the client stayed refused for good (the CI's
// opcua_client_security failure under load). The test holds the lock the filing waits for while
// the operator's move happens and is seen.
test('a certificate moved to trusted/certs while its refusal is being filed stays trusted', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'takt-trust-manager-'));
  const der = certificate(root);
  const manager = new OPCUACertificateManager({ rootFolder: path.join(root, 'pki'), automaticallyAcceptUnknownCertificate: false });
  try {
    await manager.initialize();
    const seen = [];
    const verify = manager.verifyCertificate.bind(manager);
    manager.verifyCertificate = async (...args) => {
      const status = await verify(...args);
      seen.push(`verified ${status}`);
      return status;
    };
    manager.on('certificateAdded', ({ store }) => seen.push(`added to ${store}`));
    manager.on('certificateRemoved', ({ store }) => seen.push(`removed from ${store}`));
    manager.on('certificateChange', ({ store }) => seen.push(`changed in ${store}`));
    const log = [];
    followTrustFolders(manager, (line) => log.push(line));

    // The first connection: refused, filed in rejected/, and the watcher has seen the file.
    assert.equal((await manager.checkCertificate(der)).name, 'BadCertificateUntrusted');
    const [file] = certificatesIn(manager.rejectedFolder);
    assert.ok(file, 'the refused certificate is in rejected/');
    // The watcher reports a file it has indexed only once it is ready: the file is written again
    // (same bytes) until it reports one.
    const refused = path.join(manager.rejectedFolder, file);
    await until('the watcher to see the refused certificate', async () => {
      if (seen.some((s) => s.endsWith(' rejected'))) return true;
      writeFileSync(refused, readFileSync(refused));
      return false;
    }, 10000);

    // The next connection's check refuses it; its filing waits for the lock while the operator
    // moves the certificate on and the watchers see it.
    let refusal;
    await manager.withLock2(async () => {
      seen.length = 0;
      refusal = manager.checkCertificate(der);
      await until('the second check', async () => seen.includes('verified BadCertificateUntrusted'), 10000);
      renameSync(refused, path.join(manager.trustedFolder, file));
      await until('the watchers to see the move', async () =>
        seen.includes('removed from rejected') && seen.includes('added to trusted'), 10000);
    });
    await refusal;

    assert.deepEqual(certificatesIn(manager.rejectedFolder), [], `rejected/ after the filing; ${log}`);
    assert.deepEqual(certificatesIn(manager.trustedFolder), [file], 'trusted/certs after the filing');
    assert.equal((await manager.checkCertificate(der)).name, 'Good', 'the next connection');
  } finally {
    await manager.dispose();
    rmSync(root, { recursive: true, force: true });
  }
});
