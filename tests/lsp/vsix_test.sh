#!/usr/bin/env bash
# Packages the VS Code extension (editors/vscode) into a .vsix with @vscode/vsce, offline (its
# npm packages installed by scripts/test.sh), and checks that the package holds what VS Code
# loads: the manifest, the client, the grammar, the language configuration and the language
# client library it requires; that the manifest contributes the `takt` debugger (launch and attach)
# and breakpoints in Structured Text; and that the extension, loaded with a stand-in for the
# vscode module, runs `takt dap` from the takt.path setting for that debugger.
set -euo pipefail
ext=$(cd "$(dirname "$0")/../../editors/vscode" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ ! -x "$ext/node_modules/.bin/vsce" ]; then
  echo "editors/vscode: the npm packages are missing: run npm ci in editors/vscode" >&2
  exit 1
fi
(cd "$ext" && npx --no-install vsce package --allow-missing-repository -o "$out/takt-st.vsix" >"$out/vsce.log" 2>&1) || {
  cat "$out/vsce.log"; echo "vsce package failed" >&2; exit 1; }
python3 - "$out/takt-st.vsix" <<'PY'
import json, sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
required = ["extension.vsixmanifest", "extension/package.json", "extension/extension.js", "extension/flow.js",
            "extension/syntaxes/iecst.tmLanguage.json", "extension/language-configuration.json",
            "extension/node_modules/vscode-languageclient/package.json", "extension/LICENSE.txt"]
missing = [n for n in required if n not in names]
if missing:
    sys.exit("the .vsix lacks " + ", ".join(missing))
manifest = json.loads(zipfile.ZipFile(sys.argv[1]).read("extension/package.json"))
if manifest["main"] != "./extension.js" or manifest["contributes"]["grammars"][0]["path"] != "./syntaxes/iecst.tmLanguage.json":
    sys.exit("the packaged package.json does not point at the client and the grammar")
if manifest.get("license") != "Apache-2.0" or "Apache License" not in zipfile.ZipFile(sys.argv[1]).read("extension/LICENSE.txt").decode():
    sys.exit("the .vsix does not carry the Apache-2.0 licence (package.json license, LICENSE.txt)")
if any(n.startswith("extension/node_modules/@vscode/vsce/") for n in names):
    sys.exit("the .vsix holds the packaging tool (a devDependency)")
language = manifest["contributes"]["languages"][0]["id"]
if manifest["contributes"].get("breakpoints") != [{"language": language}]:
    sys.exit(f"the package.json does not allow breakpoints in {language} files")
debuggers = manifest["contributes"].get("debuggers", [])
if [(d["type"], d["label"]) for d in debuggers] != [("takt", "takt PLC")]:
    sys.exit(f"the package.json does not contribute the takt debugger: {debuggers}")
attrs = debuggers[0]["configurationAttributes"]
for request, keys in {"launch": ["project", "execution"], "attach": ["endpoint", "tokenFile"]}.items():
    missing = [k for k in keys if k not in attrs.get(request, {}).get("properties", {})]
    if missing:
        sys.exit(f"the takt debugger's {request} configuration lacks {missing}")
if attrs["launch"]["properties"]["execution"].get("enum") != ["interpreter", "native"]:
    sys.exit("the launch configuration's execution is not interpreter | native")
if attrs["launch"].get("required") != ["project"] or attrs["attach"].get("required") != ["endpoint"]:
    sys.exit("launch must require project and attach endpoint")
requests = {c["request"] for c in debuggers[0]["initialConfigurations"]}
snippets = {s["body"]["request"] for s in debuggers[0]["configurationSnippets"]}
if requests != {"launch"} or snippets != {"launch", "attach"} or any(
        s["body"]["type"] != "takt" for s in debuggers[0]["configurationSnippets"]):
    sys.exit("the initial configuration (launch) or the snippets (launch, attach) are missing")
if "onDebug" not in manifest["activationEvents"]:
    sys.exit("the extension does not activate for a debug session")
print(f"takt-st.vsix: {len(names)} files, client, grammar and language configuration and licence present, "
      "debugger takt contributed")
PY
EXT="$ext" node <<'JS'
// extension.js with stand-ins for the vscode module and the language client: its debug adapter
// for type takt is `<takt.path> dap`, and F5 without a launch.json launches the project.
const Module = require('module');
const assert = require('assert');
const registered = { commands: {} };
const disposable = { dispose() {} };
const vscode = {
  workspace: {
    getConfiguration: () => ({ get: (key, fallback) => (key === 'path' ? '/opt/takt/bin/takt' : fallback) }),
    workspaceFolders: [{ uri: { fsPath: '/srv/plant' } }],
    createFileSystemWatcher: () => ({}),
  },
  window: {
    activeTextEditor: undefined, visibleTextEditors: [], showErrorMessage: (m) => { registered.error = m; },
    createTextEditorDecorationType: () => disposable, setStatusBarMessage: () => disposable,
  },
  commands: { registerCommand: (id, fn) => { registered.commands[id] = fn; return disposable; } },
  debug: {
    registerDebugAdapterDescriptorFactory: (type, factory) => { registered.factory = [type, factory]; return disposable; },
    registerDebugConfigurationProvider: (type, provider) => { registered.provider = [type, provider]; return disposable; },
    onDidTerminateDebugSession: (fn) => { registered.terminated = fn; return disposable; },
    activeDebugSession: undefined,
  },
  ThemeColor: class { constructor(id) { this.id = id; } },
  Range: class { constructor(start, end) { Object.assign(this, { start, end }); } },
  DebugAdapterExecutable: class { constructor(command, args, options) { Object.assign(this, { command, args, options }); } },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'vscode') return vscode;
  if (request === 'vscode-languageclient/node') {
    return { LanguageClient: class { start() { return Promise.resolve(); } }, TransportKind: { stdio: 0 } };
  }
  return load.call(this, request, ...rest);
};
const extension = require(require('path').join(process.env.EXT, 'extension.js'));
extension.activate({ subscriptions: [] });
assert.equal(registered.factory?.[0], 'takt', 'a debug adapter factory for type takt');
const descriptor = registered.factory[1].createDebugAdapterDescriptor(
  { type: 'takt', workspaceFolder: { uri: { fsPath: '/srv/plant' } } });
assert.deepEqual([descriptor.command, descriptor.args, descriptor.options],
  ['/opt/takt/bin/takt', ['dap'], { cwd: '/srv/plant' }]);
assert.equal(registered.provider?.[0], 'takt');
assert.deepEqual(registered.provider[1].resolveDebugConfiguration(undefined, {}),
  { type: 'takt', request: 'launch', name: 'takt: launch the project', project: '/srv/plant' });
const attach = { type: 'takt', request: 'attach', name: 'a', endpoint: 'unix:///tmp/s' };
assert.deepEqual(registered.provider[1].resolveDebugConfiguration(undefined, attach), attach);
console.log('extension.js: debug adapter `/opt/takt/bin/takt dap` for type takt; F5 launches the project');

// Flow control: the command asks the session's adapter for the POU at the cursor, then draws each
// line's values after it; toggled again (or the session ending), it ends and the values go.
(async () => {
  const requests = [];
  const drawn = [];
  const editor = {
    document: { uri: { scheme: 'file', fsPath: '/srv/plant/src/main.st' }, lineCount: 20,
                lineAt: (n) => ({ range: { end: { line: n, character: 30 } } }) },
    selection: { active: { line: 12 } },
    setDecorations: (type, ranges) => drawn.push(ranges),
  };
  const line = (n, count, values) => ({ source: { path: '/srv/plant/src/main.st' }, line: n, count, values });
  const session = {
    id: 's1', type: 'takt',
    customRequest: async (command, args) => {
      requests.push([command, args]);
      if (command === 'flowControl') return args.source ? { pou: 'Main', lines: [12, 13] } : { pou: null };
      return { pou: 'Main', task: 'Fast', run: 4, lines: [
        line(13, 3, [{ name: 'i', access: 'read', value: '3' }, { name: 'sum', access: 'write', value: '6' }]),
        line(16, 1, [{ name: 'arr[2]', access: 'write', value: '7' }]),
        { ...line(2, 1, []), source: { path: '/srv/plant/src/other.st' } }] };
    },
  };
  await registered.commands['takt.flowControl']();
  assert.match(registered.error, /needs a takt debug session/, 'no session: it says so');
  Object.assign(vscode.window, { activeTextEditor: editor, visibleTextEditors: [editor] });
  vscode.debug.activeDebugSession = session;
  await registered.commands['takt.flowControl']();
  assert.deepEqual(requests[0], ['flowControl', { source: { path: '/srv/plant/src/main.st' }, line: 13 }]);
  assert.equal(requests[1][0], 'flowValues');
  const shown = drawn.at(-1).map((d) => [d.range.start.line, d.renderOptions.after.contentText]);
  assert.deepEqual(shown, [[12, 'i = 3   sum := 6   (3×)'], [15, 'arr[2] := 7']]);
  await registered.commands['takt.flowControl']();
  assert.deepEqual(requests.at(-1), ['flowControl', {}]);
  assert.deepEqual(drawn.at(-1), []);
  await registered.commands['takt.flowControl']();
  registered.terminated({ id: 's1' });
  assert.deepEqual(drawn.at(-1), []);
  console.log('extension.js: flow control draws the adapter\'s values after their lines and ends with the session');
})().catch((e) => { console.error(e); process.exit(1); });
JS
