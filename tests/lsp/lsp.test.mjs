// `takt lsp` driven as VS Code drives it: open a file of a copy of examples/demo, edit it,
// and check diagnostics, hover, definition, references, symbols, formatting, completion,
// signature help and rename.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DidOpenTextDocumentNotification, DidChangeTextDocumentNotification, DidCloseTextDocumentNotification,
  HoverRequest, DefinitionRequest, ReferencesRequest, DocumentFormattingRequest, DocumentSymbolRequest,
  WorkspaceSymbolRequest, FoldingRangeRequest, CodeActionRequest, CompletionRequest, SignatureHelpRequest, RenameRequest,
} from 'vscode-languageserver-protocol';
import { scratchProject, startServer, takt, uriOf } from './support.mjs';

let project;
let server;
let tank;
let tankUri;

before(async () => {
  project = scratchProject();
  server = await startServer(project.dir);
  tank = path.join(project.dir, 'src/tank.st');
  tankUri = uriOf(tank);
});

after(async () => {
  assert.equal(await server.stop(), 0, 'exit after shutdown ends with 0');
  project.cleanup();
});

test('initialize announces the features', () => {
  const caps = server.init.capabilities;
  assert.equal(server.init.serverInfo.name, 'takt');
  assert.equal(caps.textDocumentSync.change, 2);
  assert.deepEqual(caps.completionProvider.triggerCharacters, ['.']);
  for (const c of ['renameProvider', 'hoverProvider', 'definitionProvider', 'referencesProvider', 'documentFormattingProvider',
    'documentRangeFormattingProvider', 'documentSymbolProvider', 'workspaceSymbolProvider']) {
    assert.equal(caps[c], true, c);
  }
});

test('open publishes diagnostics; an unsaved edit changes them; close restores the disk state', async () => {
  const opened = server.nextDiagnostics(tankUri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: tankUri, languageId: 'iecst', version: 1, text: readFileSync(tank, 'utf8') },
  });
  assert.deepEqual((await opened).diagnostics, []);

  const changed = server.nextDiagnostics(tankUri);
  await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri: tankUri, version: 2 },
    contentChanges: [{ range: { start: { line: 25, character: 0 }, end: { line: 25, character: 5 } }, text: 'Levle' }],
  });
  const d = await changed;
  assert.equal(d.version, 2);
  assert.equal(d.diagnostics.length, 1);
  const [diag] = d.diagnostics;
  assert.equal(diag.code, 'E0104');
  assert.equal(diag.severity, 1);
  assert.match(diag.message, /Levle/);
  assert.deepEqual(diag.range, { start: { line: 25, character: 0 }, end: { line: 25, character: 5 } });
  assert.match(diag.data.explanation, /identifier/);

  const fixed = server.nextDiagnostics(tankUri);
  await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri: tankUri, version: 3 },
    contentChanges: [{ text: readFileSync(tank, 'utf8') }],
  });
  assert.deepEqual((await fixed).diagnostics, []);
});

test('hover shows the declaration, its doc comment and the value range', async () => {
  const h = await server.connection.sendRequest(HoverRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 29, character: 20 },
  });
  assert.equal(h.contents.kind, 'markdown');
  assert.match(h.contents.value, /VAR_INPUT StartLevel : REAL := 40\.0/);
  assert.match(h.contents.value, /pump on below/);
  const raw = await server.connection.sendRequest(HoverRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 7, character: 6 },
  });
  assert.match(raw.contents.value, /Range: `-32768\.\.32767`/);
});

test('definition leads to the FUNCTION in another file', async () => {
  const loc = await server.connection.sendRequest(DefinitionRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 25, character: 12 },
  });
  assert.equal(loc.uri, uriOf(path.join(project.dir, 'src/scaling.st')));
  const lines = readFileSync(path.join(project.dir, 'src/scaling.st'), 'utf8').split('\n');
  assert.match(lines[loc.range.start.line].slice(loc.range.start.character), /^ScaleAnalog/);
});

test('references list every use of the variable and nothing else', async () => {
  const refs = await server.connection.sendRequest(ReferencesRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 14, character: 5 }, context: { includeDeclaration: true },
  });
  // FB_TankLevel's output Level, in its own body and as `Tank.Level` where the FB is used.
  const inTank = refs.filter((r) => r.uri === tankUri).map((r) => r.range.start.line);
  assert.deepEqual(inTank, [14, 25, 27, 29, 30, 35]);
  assert.ok(refs.some((r) => r.uri !== tankUri), 'used in another file');
  for (const r of refs) {
    const lines = readFileSync(new URL(r.uri), 'utf8').split('\n');
    assert.equal(lines[r.range.start.line].slice(r.range.start.character, r.range.end.character), 'Level');
  }
  const withoutDecl = await server.connection.sendRequest(ReferencesRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 14, character: 5 }, context: { includeDeclaration: false },
  });
  assert.equal(withoutDecl.length, refs.length - 1);
});

test('document and workspace symbols', async () => {
  const syms = await server.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: tankUri } });
  assert.equal(syms[0].name, 'FB_TankLevel');
  assert.ok(syms[0].children.some((c) => c.name === 'DryRunTimer' && c.detail === 'TON'));
  const ws = await server.connection.sendRequest(WorkspaceSymbolRequest.type, { query: 'ScaleAn' });
  assert.deepEqual(ws.map((s) => s.name), ['ScaleAnalog']);
});

test('formatting returns the layout of takt fmt for an unsaved buffer', async () => {
  const messyUri = uriOf(path.join(project.dir, 'src/messy.st'));
  const text = 'program Messy\nvar x:int;end_var\nx:=x+1;\nend_program\n';
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: messyUri, languageId: 'iecst', version: 1, text },
  });
  const edits = await server.connection.sendRequest(DocumentFormattingRequest.type, {
    textDocument: { uri: messyUri }, options: { tabSize: 4, insertSpaces: true },
  });
  // The buffer with the edits applied is what `takt fmt` makes of the same text on disk.
  assert.equal(edits.length, 1);
  assert.deepEqual(edits[0].range, { start: { line: 0, character: 0 }, end: { line: 4, character: 0 } });
  const onDisk = path.join(project.dir, 'messy_copy.st');
  writeFileSync(onDisk, text);
  assert.equal(spawnSync(takt, ['fmt', onDisk]).status, 0);
  assert.equal(edits[0].newText, readFileSync(onDisk, 'utf8'));
  assert.notEqual(edits[0].newText, text);
  await server.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri: messyUri } });
});

test('completion after a dot lists the members of the FB instance', async () => {
  const items = await server.connection.sendRequest(CompletionRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 36, character: 22 },
  });
  const labels = items.map((i) => i.label).sort();
  assert.ok(['ET', 'IN', 'PT', 'Q'].every((m) => labels.includes(m)), labels.join(','));
  assert.ok(!labels.includes('Level'));
  const inBody = await server.connection.sendRequest(CompletionRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 26, character: 0 },
  });
  const scale = inBody.find((i) => i.label === 'ScaleAnalog');
  assert.match(scale.detail, /Raw : INT, RawLow : INT/);
  assert.ok(inBody.some((i) => i.label === 'END_IF' && i.kind === 14));
});

test('signature help names the active parameter', async () => {
  const help = await server.connection.sendRequest(SignatureHelpRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 25, character: 48 },
  });
  assert.match(help.signatures[0].label, /^ScaleAnalog\(Raw : INT, RawLow : INT/);
  assert.equal(help.activeParameter, 1);
});

test('signature help shows a standard function with its generic types', async () => {
  const uri = uriOf(path.join(project.dir, 'src/sig.st'));
  const published = server.nextDiagnostics(uri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'iecst', version: 1, text: 'PROGRAM Sig\nVAR\n    x : INT;\nEND_VAR\nx := LIMIT(0, x, 10);\nEND_PROGRAM\n' },
  });
  await published;
  const help = await server.connection.sendRequest(SignatureHelpRequest.type, {
    textDocument: { uri }, position: { line: 4, character: 14 },
  });
  assert.equal(help.signatures[help.activeSignature].label,
    'LIMIT(MN : ANY_ELEMENTARY, IN : ANY_ELEMENTARY, MX : ANY_ELEMENTARY) : ANY_ELEMENTARY');
  assert.equal(help.activeParameter, 1);
  await server.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
});

test('rename edits every use and refuses a clash', async () => {
  const edit = await server.connection.sendRequest(RenameRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 20, character: 6 }, newName: 'LevelAtBegin',
  });
  assert.deepEqual(edit.changes[tankUri].map((e) => e.range.start.line), [20, 30, 35]);
  await assert.rejects(server.connection.sendRequest(RenameRequest.type, {
    textDocument: { uri: tankUri }, position: { line: 20, character: 6 }, newName: 'Pump',
  }), /already declared/);
});

test('folding ranges cover the blocks and the header comment', async () => {
  const ranges = await server.connection.sendRequest(FoldingRangeRequest.type, { textDocument: { uri: tankUri } });
  const lines = readFileSync(tank, 'utf8').split('\n');
  for (const r of ranges.filter((x) => x.kind !== 'comment')) {
    // Each block folds from its keyword to the line before the END_* that closes it.
    assert.match(lines[r.endLine + 1], /^\s*END_/, `${r.startLine}..${r.endLine}`);
  }
  assert.ok(ranges.some((r) => r.kind === 'comment' && r.startLine === 0));
  assert.ok(ranges.some((r) => /^IF /.test(lines[r.startLine])));
});

test('a quick fix declares an unknown name', async () => {
  const uri = uriOf(path.join(project.dir, 'src/fixme.st'));
  const published = server.nextDiagnostics(uri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'iecst', version: 1, text: 'PROGRAM Fixme\nVAR\n    a : INT;\nEND_VAR\nflag := a > 1;\nEND_PROGRAM\n' },
  });
  const { diagnostics } = await published;
  assert.deepEqual(diagnostics.map((d) => d.code), ['E0104']);
  const actions = await server.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri }, range: diagnostics[0].range, context: { diagnostics },
  });
  assert.equal(actions.length, 1);
  assert.equal(actions[0].kind, 'quickfix');
  assert.deepEqual(actions[0].edit.changes[uri], [{
    range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } }, newText: '    flag : BOOL;\n',
  }]);
  await server.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
});

test('the CODESYS-name hints are quick fixes', async () => {
  const uri = uriOf(path.join(project.dir, 'src/hints.st'));
  const published = server.nextDiagnostics(uri);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'iecst', version: 1, text: 'PROGRAM Hints\nVAR\n    c : CTU;\nEND_VAR\nc(CU := TRUE, RESET := FALSE, PV := 3);\nEND_PROGRAM\n' },
  });
  const { diagnostics } = await published;
  assert.deepEqual(diagnostics.map((d) => d.code), ['W1009']);
  const actions = await server.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri }, range: diagnostics[0].range, context: { diagnostics },
  });
  assert.equal(actions.length, 1);
  assert.equal(actions[0].title, "Use the IEC name 'R'");
  assert.deepEqual(actions[0].edit.changes[uri], [{
    range: { start: { line: 4, character: 14 }, end: { line: 4, character: 19 } }, newText: 'R',
  }]);
  await server.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
});
