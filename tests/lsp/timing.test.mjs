// How long `takt lsp` takes from a didChange to its publishDiagnostics: on the demo, on a
// generated 2,000-line file, and on a generated 50,000-line project (where an edit of a body is
// re-checked by file, docs/editor.md). The edits alternate between a comment line above the first
// block and a statement typed into its body. The figures are printed, not asserted: they depend
// on the machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DidOpenTextDocumentNotification, DidChangeTextDocumentNotification } from 'vscode-languageserver-protocol';
import { generatedSource, scratchProject, startServer, uriOf } from './support.mjs';

// The line of the first statement of a generatedSource() file (its first IF).
const kFirstStatement = 39;

// The CPU time (user + system) the process has used, from /proc (10 ms ticks): on a loaded
// machine the latency includes waiting for a core, the CPU time does not.
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(label, dir, file, rounds = Number(process.env.TAKT_LSP_ROUNDS || 5), bodyLine = -1) {
  const server = await startServer(dir);
  const uri = uriOf(file);
  const text = readFileSync(file, 'utf8');
  const first = server.nextDiagnostics(uri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'iecst', version: 1, text },
  });
  assert.deepEqual((await first).diagnostics, []);
  const times = [];
  const cpuBefore = cpuMs(server.pid);
  for (let i = 0; i < rounds; ++i) {
    const published = server.nextDiagnostics(uri);
    const start = process.hrtime.bigint();
    await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: i + 2 },
      contentChanges: [i % 2 === 0 || bodyLine < 0
        ? { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: `// edit ${i}\n` }
        : { range: { start: { line: bodyLine + ((i + 1) >> 1), character: 0 }, end: { line: bodyLine + ((i + 1) >> 1), character: 0 } }, text: `v1 := v0 + ${i};\n` }],
    });
    const d = await published;
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    assert.deepEqual(d.diagnostics, []);
  }
  const cpuPerEdit = (cpuMs(server.pid) - cpuBefore) / rounds;
  times.sort((a, b) => a - b);
  const p = (q) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)].toFixed(1);
  console.log(`takt lsp ${label}: didChange -> publishDiagnostics p50 ${p(0.5)} ms, p95 ${p(0.95)} ms, ` +
    `max ${times[times.length - 1].toFixed(1)} ms over ${rounds} edits; the server's CPU time ${cpuPerEdit.toFixed(1)} ms per edit`);
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
    await measure('one 2,000-line file', p.dir, file, undefined, kFirstStatement);
  } finally {
    p.cleanup();
  }
});

test('timing: a 50,000-line project', { skip: process.env.TAKT_LSP_LARGE !== '1' && 'set TAKT_LSP_LARGE=1' }, async () => {
  const p = scratchProject(false);
  try {
    for (let i = 0; i < 25; ++i) {
      writeFileSync(path.join(p.dir, `src/part${i}.st`), generatedSource(`P${i}`, 2000));
    }
    await measure('edit in a 2,000-line file of a 50,000-line project', p.dir, path.join(p.dir, 'src/part0.st'),
      Number(process.env.TAKT_LSP_ROUNDS || 40), kFirstStatement);
  } finally {
    p.cleanup();
  }
});
