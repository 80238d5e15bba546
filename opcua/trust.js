'use strict';
// The trust list is the folders of the PKI (docs/opcua.md): a certificate in trusted/certs is
// trusted, one in rejected/ is not. node-opcua keeps an index of both in memory, kept up to date
// by file watchers, and counts a certificate in both as rejected. A certificate it refuses is
// written to rejected/ and indexed at once, but under the file's name only when the watcher
// reports the file; one moved on to trusted/certs before that report (by a script, or a busy
// server) was never removed from the rejected index, and the client stayed refused until the
// server restarted. So a refusal is checked against the folders: when the certificate lies in
// trusted/certs and not in rejected/, the index is stale and is read again from the folders.
// Checks wait while it is, so none answers from a half-read index.
//
// After a refusal node-opcua files the certificate (rejectCertificate, under the PKI's file lock),
// deciding from the index where it lies: one the operator moved to trusted/certs since the check,
// seen by the watchers, was moved back to rejected/, and one seen half was copied there; both
// refused the client for good. The server never moves a certificate out of trusted/certs nor files
// one that lies there: only an unknown certificate is written to rejected/.
const { X509Certificate } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

// The DER certificates of the files in `folder` (a missing folder holds none; a file that is no
// certificate is none).
async function certificatesIn(folder) {
  let names;
  try {
    names = await fs.promises.readdir(folder);
  } catch {
    return [];
  }
  const found = [];
  for (const name of names) {
    try {
      found.push(new X509Certificate(await fs.promises.readFile(path.join(folder, name))).raw);
    } catch {
      // not a certificate (a folder, a half-written file): the manager ignores it too
    }
  }
  return found;
}

// Whether `folder` holds the first certificate of `chain` (DER, the client's certificate first).
async function holds(folder, chain) {
  const certificates = await certificatesIn(folder);
  return certificates.some((der) => chain.length >= der.length && chain.subarray(0, der.length).equals(der));
}

// Makes `manager` (an OPCUACertificateManager) answer from its folders when its index is stale.
// The index is read again only once no check is under way, and no check starts meanwhile: one
// reading a half-read index would find a trusted certificate unknown and file it in rejected/.
function followTrustFolders(manager, log) {
  const check = manager.checkCertificate.bind(manager);
  let reading = null; // the reload under way
  let running = 0; // checks under way
  let idle = []; // resolvers waiting for `running` to reach 0

  async function gated(chain) {
    while (reading) {
      await reading;
    }
    running += 1;
    try {
      return await check(chain);
    } finally {
      running -= 1;
      if (running === 0) {
        idle.forEach((resolve) => resolve());
        idle = [];
      }
    }
  }

  function reload() {
    if (!reading) {
      log('a trusted certificate was still refused from memory: reading the trust list again');
      reading = (async () => {
        if (running > 0) {
          await new Promise((resolve) => idle.push(resolve));
        }
        await manager.reloadCertificates();
      })().catch((err) => {
        log(`reading the trust list again failed: ${err.message}`);
      }).finally(() => {
        reading = null;
      });
    }
    return reading;
  }

  async function checked(chain) {
    const status = await gated(chain);
    if (status.name !== 'BadCertificateUntrusted' || !Buffer.isBuffer(chain)) {
      return status;
    }
    if (!(await holds(manager.trustedFolder, chain)) || (await holds(manager.rejectedFolder, chain))) {
      return status;
    }
    await reload();
    return gated(chain);
  }

  // isCertificateTrusted writes an unknown certificate to rejected/ and moves none.
  manager.rejectCertificate = async (chain) => {
    if (!(await holds(manager.trustedFolder, chain))) {
      await manager.isCertificateTrusted(chain);
    }
  };

  // node-opcua calls it with a callback or for a promise. The callback runs outside the promise
  // chain, so what it throws is not taken for a refused check.
  manager.checkCertificate = (chain, callback) => {
    const answer = checked(chain);
    if (typeof callback !== 'function') {
      return answer;
    }
    answer.then(
      (status) => process.nextTick(callback, null, status),
      (err) => process.nextTick(callback, err),
    );
    return undefined;
  };
}

module.exports = { followTrustFolders };
