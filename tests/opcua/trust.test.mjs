// opcua/trust.js against a stand-in for node-opcua's certificate manager (its check answers from
// an index that reloadCertificates() fills from the folders): a refusal of a certificate that lies
// in trusted/certs reads the folders again, never while another check is under way, and no check
// runs until the reading is done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { followTrustFolders } = require('../../opcua/trust.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A self-signed certificate in `dir`/`name`.pem; its DER bytes.
function certificate(dir, name) {
  const pem = path.join(dir, `${name}.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}`,
    '-keyout', path.join(dir, `${name}.key`), '-out', pem], { stdio: 'ignore' });
  return execFileSync('openssl', ['x509', '-in', pem, '-outform', 'DER']);
}

// The stand-in: `trusted` is its index; each check takes `checkMs`; what ran when is in `log`.
function manager(root, checkMs) {
  const m = {
    trustedFolder: path.join(root, 'trusted', 'certs'),
    rejectedFolder: path.join(root, 'rejected'),
    trusted: new Set(),
    running: 0,
    log: [],
    async checkCertificate(chain) {
      m.running += 1;
      m.log.push(`check ${chain.length}`);
      await sleep(checkMs);
      m.running -= 1;
      return { name: m.trusted.has(chain.toString('hex')) ? 'Good' : 'BadCertificateUntrusted' };
    },
    async reloadCertificates() {
      m.log.push(`reload with ${m.running} checks running`);
      await sleep(100);
      m.trusted = new Set();
      for (const f of ['a.der', 'b.der']) {
        try {
          m.trusted.add(readFileSync(path.join(m.trustedFolder, f)).toString('hex'));
        } catch {
          // not trusted
        }
      }
      m.log.push('reloaded');
    },
  };
  mkdirSync(m.trustedFolder, { recursive: true });
  mkdirSync(m.rejectedFolder, { recursive: true });
  return m;
}

test('a stale refusal reads the folders again once no check runs, and checks wait for it', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'takt-trust-'));
  try {
    const a = certificate(root, 'a');
    const b = certificate(root, 'b');
    const m = manager(root, 200);
    const said = [];
    followTrustFolders(m, (line) => said.push(line));
    // b is in trusted/certs on disk, not in the index: the operator's move the index missed.
    execFileSync('cp', [path.join(root, 'b.pem'), path.join(m.trustedFolder, 'b.pem')]);
    execFileSync('openssl', ['x509', '-in', path.join(root, 'b.pem'), '-outform', 'DER', '-out', path.join(m.trustedFolder, 'b.der')]);

    const stale = m.checkCertificate(b); // its first check ends at 200 ms, refused from the index
    await sleep(100);
    const slow = m.checkCertificate(a); // under way until 300 ms: the reading waits for it
    await sleep(150);
    const during = m.checkCertificate(a); // starts while the reading waits or runs: waits for it
    assert.equal((await slow).name, 'BadCertificateUntrusted', 'a is in no folder');
    assert.equal((await stale).name, 'Good', 'b is trusted once the folders are read again');
    assert.equal((await during).name, 'BadCertificateUntrusted');
    assert.ok(m.log.includes('reload with 0 checks running'), m.log.join('; '));
    const reloadAt = m.log.findIndex((l) => l.startsWith('reload'));
    assert.ok(m.log.indexOf('reloaded') === reloadAt + 1, `nothing ran during the reading: ${m.log.join('; ')}`);
    assert.equal(said.length, 1, said.join('\n'));

    // A certificate in rejected/ as well stays refused, without reading the folders again.
    execFileSync('cp', [path.join(root, 'a.pem'), path.join(m.trustedFolder, 'a.pem')]);
    execFileSync('cp', [path.join(root, 'a.pem'), path.join(m.rejectedFolder, 'a.pem')]);
    const reloads = m.log.filter((l) => l.startsWith('reload ')).length;
    assert.equal((await m.checkCertificate(a)).name, 'BadCertificateUntrusted');
    assert.equal(m.log.filter((l) => l.startsWith('reload ')).length, reloads);

    // The callback form answers outside the promise chain.
    const viaCallback = await new Promise((resolve, reject) => m.checkCertificate(b, (err, s) => (err ? reject(err) : resolve(s))));
    assert.equal(viaCallback.name, 'Good');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
