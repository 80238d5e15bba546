// What the tests of `takt lsp` share: a client over the server's stdio built from
// vscode-jsonrpc (the library VS Code's own client uses), a scratch copy of examples/demo, and
// generated ST of a chosen size.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { createProtocolConnection } from 'vscode-languageserver-protocol/node';
import {
  InitializeRequest, InitializedNotification, ShutdownRequest, ExitNotification,
  PublishDiagnosticsNotification,
} from 'vscode-languageserver-protocol';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const takt = process.env.TAKT_BIN || path.join(repo, 'build/takt');

export function uriOf(file) {
  return pathToFileURL(file).href;
}

// A scratch project: examples/demo copied, or an empty folder with runtime.toml.
export function scratchProject(fromDemo = true) {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-lsp-'));
  if (fromDemo) {
    cpSync(path.join(repo, 'examples/demo'), dir, { recursive: true });
  } else {
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'runtime.toml'), '[build]\noverflow = "wrap"\n');
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// `lines` lines of valid ST: function blocks of about 200 lines each, named after `tag`.
export function generatedSource(tag, lines) {
  const out = [];
  let fb = 0;
  while (out.length < lines - 10) {
    out.push(`FUNCTION_BLOCK FB_${tag}_${fb}`, 'VAR_INPUT', '    a : INT;', 'END_VAR', 'VAR_OUTPUT', '    q : INT;', 'END_VAR', 'VAR');
    for (let v = 0; v < 30; ++v) out.push(`    v${v} : INT;`);
    out.push('END_VAR');
    for (let v = 1; v < 30; ++v) {
      out.push(`IF v${v - 1} > ${v} THEN`, `    v${v} := v${v - 1} * 2 + a;`, 'ELSE', `    v${v} := v${v - 1} - 1;`, 'END_IF;');
    }
    out.push('q := v29;', 'END_FUNCTION_BLOCK', '');
    ++fb;
  }
  return out.join('\n');
}

// A running `takt lsp` with a connection; diagnostics() waits for the next publish for a URI.
export async function startServer(rootDir) {
  const child = spawn(takt, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const waiting = new Map();
  const latest = new Map();
  connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
    latest.set(p.uri, p);
    const w = waiting.get(p.uri);
    if (w) {
      waiting.delete(p.uri);
      w(p);
    }
  });
  connection.listen();
  const init = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid, rootUri: uriOf(rootDir), capabilities: {}, workspaceFolders: [{ uri: uriOf(rootDir), name: 'demo' }],
  });
  await connection.sendNotification(InitializedNotification.type, {});
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    connection, init, latest, exited, pid: child.pid,
    nextDiagnostics(uri) {
      return new Promise((resolve) => waiting.set(uri, resolve));
    },
    async stop() {
      await connection.sendRequest(ShutdownRequest.type);
      await connection.sendNotification(ExitNotification.type);
      const code = await exited;
      connection.dispose();
      return code;
    },
  };
}
