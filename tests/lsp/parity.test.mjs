// The editor publishes exactly what `takt check` prints: for each project below (truST projects
// with trust-lsp.toml libraries, include paths and a vendor profile, and takt projects with a
// [build] sources_root), the diagnostics of `takt check --json` and those `takt lsp` publishes
// after an open, after an edit, and after an edit that fixes or breaks a use of a library.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DidOpenTextDocumentNotification, DidChangeTextDocumentNotification, DocumentSymbolRequest,
} from 'vscode-languageserver-protocol';
import { startServer, takt, uriOf } from './support.mjs';

function write(root, files) {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

// What `takt check --json` reports, as "file:line:col severity code message" lines.
function checkLines(dir) {
  let out;
  try {
    out = execFileSync(takt, ['check', '--project', dir, '--json'], { encoding: 'utf8' });
  } catch (e) {
    out = e.stdout; // exit 11: source errors
  }
  const doc = JSON.parse(out);
  assert.equal(doc.project_errors, undefined, out);
  return doc.diagnostics.map((d) => {
    const file = path.isAbsolute(d.path) ? d.path : path.join(dir, d.path);
    return `${path.normalize(file)}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`;
  }).sort();
}

// What the server has published last for every file, in the same form.
function lspLines(server) {
  const lines = [];
  for (const [uri, p] of server.latest) {
    const file = fileURLToPath(uri);
    for (const d of p.diagnostics) {
      const severity = d.severity === 1 ? 'error' : d.severity === 2 ? 'warning' : 'note';
      lines.push(`${path.normalize(file)}:${d.range.start.line + 1}:${d.range.start.character + 1} ${severity} ${d.code} ${d.message}`);
    }
  }
  return lines.sort();
}

// Requests are answered in order, after the notifications of the messages before them.
async function settled(server, uri) {
  await server.connection.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } });
}

const kLibrary = {
  'lib/trust-lsp.toml': '[package]\nname = "Motion"\nversion = "1.2.0"\n\n[project]\ninclude_paths = ["st"]\n',
  'lib/st/axis.st': [
    'FUNCTION_BLOCK FB_Axis',
    'VAR_INPUT',
    '    enable : BOOL;',
    'END_VAR',
    'VAR_OUTPUT',
    '    ready : BOOL;',
    'END_VAR',
    'VAR',
    '    spare : INT;',
    'END_VAR',
    'ready := enable;',
    'END_FUNCTION_BLOCK',
    '',
    'FUNCTION Scale : REAL',
    'VAR_INPUT',
    '    x : INT;',
    'END_VAR',
    'Scale := INT_TO_REAL(x) * 0.5;',
    'END_FUNCTION',
    '',
  ].join('\n'),
};

const kMain = [
  'PROGRAM Main',
  'VAR',
  '    axis : FB_Axis;',
  '    edge : DIFU;',
  '    speed : REAL;',
  '    start : BOOL;',
  '    unused : INT;',
  'END_VAR',
  'axis(enable := start);',
  'edge(IN := axis.ready);',
  'speed := Scale(3);',
  'END_PROGRAM',
  '',
].join('\n');

const kProjects = [
  {
    name: 'truST project: a library by path, include paths, the mitsubishi vendor profile',
    open: 'app/sources/main.st',
    files: {
      ...kLibrary,
      'app/trust-lsp.toml': '[project]\ninclude_paths = ["sources", "shared"]\nvendor_profile = "mitsubishi"\nlint_level = "pedantic"\n\n' +
        '[dependencies]\nMotion = { path = "../lib", version = "1.2.0" }\n',
      'app/sources/main.st': kMain,
      'app/shared/util.st': 'FUNCTION Twice : INT\nVAR_INPUT\n    v : INT;\nEND_VAR\nTwice := v * 2;\nEND_FUNCTION\n',
    },
    root: 'app',
  },
  {
    name: 'truST project with runtime.toml beside trust-lsp.toml',
    open: 'app/src/main.st',
    files: {
      ...kLibrary,
      'app/runtime.toml': '[build]\noverflow = "wrap"\n',
      'app/trust-lsp.toml': '[project]\nvendor_profile = "gxworks3"\n\n[dependencies]\nMotion = "../lib"\n',
      'app/src/main.st': kMain,
    },
    root: 'app',
  },
  {
    name: 'takt project with a [build] sources_root',
    open: 'app/plc/main.st',
    files: {
      'app/runtime.toml': '[build]\nsources_root = "plc"\ndialect = "iec"\n',
      'app/plc/main.st': 'PROGRAM Main\nVAR\n    n : INT;\n    p : POINTER TO INT;\nEND_VAR\nn := n + 1;\nEND_PROGRAM\n',
      'app/plc/more/extra.st': 'FUNCTION_BLOCK Extra\nVAR\n    idle : BOOL;\nEND_VAR\nEND_FUNCTION_BLOCK\n',
      'app/src/ignored.st': 'PROGRAM Ignored\nnothing := 1;\nEND_PROGRAM\n',
    },
    root: 'app',
  },
];

for (const project of kProjects) {
  test(`parity: ${project.name}`, async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'takt-parity-'));
    try {
      write(base, project.files);
      const dir = path.join(base, project.root);
      const file = path.join(base, project.open);
      const uri = uriOf(file);
      const expected = checkLines(dir);
      assert.ok(expected.length > 0, 'the project has diagnostics to compare');

      const server = await startServer(dir);
      const text = readFileSync(file, 'utf8');
      await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: 'iecst', version: 1, text },
      });
      await settled(server, uri);
      assert.deepEqual(lspLines(server), expected, 'after didOpen');

      // An edit in a body (kept declarations), then one that names a library POU wrongly, then
      // the fix: each time what the server published equals what check prints for the same text.
      const edits = [
        text.replace('speed := Scale(3);', 'speed := Scale(4);'),
        text.replace('speed := Scale(3);', 'speed := Scale(4) + NoSuchThing(1);'),
        text,
      ];
      let version = 2;
      for (const edited of edits) {
        await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
          textDocument: { uri, version: version++ },
          contentChanges: [{ text: edited }],
        });
        await settled(server, uri);
        writeFileSync(file, edited);
        assert.deepEqual(lspLines(server), checkLines(dir), `after the edit to version ${version - 1}`);
      }
      if (project.files['lib/st/axis.st']) {
        // The library's file, open in the editor (its own project), loses the input the project
        // connects: the project's diagnostics follow, as takt check of the project prints them.
        const libFile = path.join(base, 'lib/st/axis.st');
        const libUri = uriOf(libFile);
        const libText = readFileSync(libFile, 'utf8');
        await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
          textDocument: { uri: libUri, languageId: 'iecst', version: 1, text: libText },
        });
        const renamed = libText.replace('    enable : BOOL;', '    en : BOOL;').replace('ready := enable;', 'ready := en;');
        await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
          textDocument: { uri: libUri, version: 2 },
          contentChanges: [{ text: renamed }],
        });
        await settled(server, libUri);
        writeFileSync(libFile, renamed);
        const now = checkLines(dir);
        assert.ok(now.some((l) => l.includes("'enable'")), now.join('\n'));
        assert.deepEqual(lspLines(server), now, 'after an edit of the library');
      }
      assert.equal(await server.stop(), 0);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
}
