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
function followTrustFolders(manager, log) {
  const check = manager.checkCertificate.bind(manager);
  let reading = null;

  async function checked(chain) {
    if (reading) {
      await reading;
    }
    const status = await check(chain);
    if (status.name !== 'BadCertificateUntrusted' || !Buffer.isBuffer(chain)) {
      return status;
    }
    if (!(await holds(manager.trustedFolder, chain)) || (await holds(manager.rejectedFolder, chain))) {
      return status;
    }
    if (!reading) {
      log('a trusted certificate was still refused from memory: reading the trust list again');
      reading = manager.reloadCertificates().finally(() => {
        reading = null;
      });
    }
    await reading;
    return check(chain);
  }

  // node-opcua calls it with a callback or for a promise.
  manager.checkCertificate = (chain, callback) => {
    const answer = checked(chain);
    if (typeof callback !== 'function') {
      return answer;
    }
    answer.then((status) => callback(null, status), callback);
    return undefined;
  };
}

module.exports = { followTrustFolders };
