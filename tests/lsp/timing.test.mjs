// How long `takt lsp` takes from a didChange to its publishDiagnostics: on the demo, on a
// generated 2,000-line file, and on a generated 50,000-line project (a full re-check each time).
// The figures are printed, not asserted: they depend on the machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DidOpenTextDocumentNotification, DidChangeTextDocumentNotification } from 'vscode-languageserver-protocol';
import { generatedSource, scratchProject, startServer, uriOf } from './support.mjs';

const rounds = Number(process.env.TAKT_LSP_ROUNDS || 5);

async function measure(label, dir, file) {
  const server = await startServer(dir);
  const uri = uriOf(file);
  const text = readFileSync(file, 'utf8');
  const first = server.nextDiagnostics(uri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'iecst', version: 1, text },
  });
  assert.deepEqual((await first).diagnostics, []);
  const times = [];
  for (let i = 0; i < rounds; ++i) {
    const published = server.nextDiagnostics(uri);
    const start = process.hrtime.bigint();
    await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: i + 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: `// edit ${i}\n` }],
    });
    const d = await published;
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    assert.deepEqual(d.diagnostics, []);
  }
  times.sort((a, b) => a - b);
  console.log(`takt lsp ${label}: didChange -> publishDiagnostics median ${times[times.length >> 1].toFixed(1)} ms, ` +
    `max ${times[times.length - 1].toFixed(1)} ms over ${rounds} edits`);
  assert.equal(await server.stop(), 0);
}

test('timing: demo', async () => {
  const p = scratchProject();
  try {
    await measure('demo (8 files, 358 lines)', p.dir, path.join(p.dir, 'src/tank.st'));
  } finally {
    p.cleanup();
  }
});

test('timing: a 2,000-line file', async () => {
  const p = scratchProject(false);
  try {
    const file = path.join(p.dir, 'src/big.st');
    writeFileSync(file, generatedSource('Big', 2000));
    await measure('one 2,000-line file', p.dir, file);
  } finally {
    p.cleanup();
  }
});

test('timing: a 50,000-line project (full re-check)', { skip: process.env.TAKT_LSP_LARGE !== '1' && 'set TAKT_LSP_LARGE=1' }, async () => {
  const p = scratchProject(false);
  try {
    for (let i = 0; i < 25; ++i) {
      writeFileSync(path.join(p.dir, `src/part${i}.st`), generatedSource(`P${i}`, 2000));
    }
    await measure('edit in a 2,000-line file of a 50,000-line project', p.dir, path.join(p.dir, 'src/part0.st'));
  } finally {
    p.cleanup();
  }
});
