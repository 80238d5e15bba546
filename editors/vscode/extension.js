// The takt extension: starts `takt lsp` for Structured Text files, adds commands that run the
// takt CLI in the folder of the project (the one holding runtime.toml), and debugs with `takt dap`
// (debug type `takt`: launch a project, or attach to a running runtime) with flow control beside
// the lines (flow.js).
'use strict';
const path = require('path');
const fs = require('fs');
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');
const { FlowView } = require('./flow');

let client;

function taktPath() {
  return vscode.workspace.getConfiguration('takt').get('path', 'takt');
}

// The project of the active file (nearest runtime.toml above it), else the first workspace folder.
function projectFolder() {
  const editor = vscode.window.activeTextEditor;
  const folders = vscode.workspace.workspaceFolders || [];
  if (editor && editor.document.uri.scheme === 'file') {
    for (let dir = path.dirname(editor.document.uri.fsPath); ; dir = path.dirname(dir)) {
      if (fs.existsSync(path.join(dir, 'runtime.toml'))) return dir;
      if (dir === path.dirname(dir)) break;
    }
  }
  return folders.length > 0 ? folders[0].uri.fsPath : undefined;
}

// One CLI run as a task, its output read by the $takt-check problem matcher.
function runTask(name, args) {
  const cwd = projectFolder();
  if (!cwd) {
    vscode.window.showErrorMessage('takt: open a folder with a runtime.toml first');
    return;
  }
  const task = new vscode.Task({ type: 'shell', task: name }, vscode.TaskScope.Workspace, name, 'takt',
    new vscode.ShellExecution(taktPath(), args, { cwd }), ['$takt-check']);
  vscode.tasks.executeTask(task);
}

function startClient(context) {
  const serverOptions = { command: taktPath(), args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'iecst' }],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/{*.st,*.pou,runtime.toml}') },
  };
  client = new LanguageClient('takt', 'takt lsp', serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start();
}

// `takt dap` over stdio, from the same takt as the language server, in the session's workspace
// folder (a relative `project` is relative to it).
const debugAdapterFactory = {
  createDebugAdapterDescriptor(session) {
    const folder = session && session.workspaceFolder;
    return new vscode.DebugAdapterExecutable(taktPath(), ['dap'], folder ? { cwd: folder.uri.fsPath } : undefined);
  },
};

// F5 without a launch.json: launch the project of the active file.
const debugConfigurationProvider = {
  resolveDebugConfiguration(folder, config) {
    if (!config.type && !config.request && !config.name) {
      const project = projectFolder();
      if (!project) {
        vscode.window.showErrorMessage('takt: open a folder with a runtime.toml first');
        return undefined;
      }
      return { type: 'takt', request: 'launch', name: 'takt: launch the project', project };
    }
    return config;
  },
};

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('takt', debugAdapterFactory),
    vscode.debug.registerDebugConfigurationProvider('takt', debugConfigurationProvider));
  const flow = new FlowView(vscode);
  context.subscriptions.push(flow.decoration, vscode.debug.onDidTerminateDebugSession((s) => flow.sessionEnded(s)));
  const commands = {
    'takt.check': () => runTask('check', ['check']),
    'takt.build': () => runTask('build', ['build']),
    'takt.test': () => runTask('test', ['test']),
    'takt.run': () => runTask('run', ['run']),
    'takt.reload': () => runTask('reload', ['reload']),
    'takt.flowControl': () => flow.toggle(),
    'takt.restartServer': async () => {
      if (client) await client.stop();
      await startClient(context);
    },
  };
  for (const [id, fn] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  }
  return startClient(context);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate, debugAdapterFactory, debugConfigurationProvider };
