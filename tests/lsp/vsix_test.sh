#!/usr/bin/env bash
# Packages the VS Code extension (editors/vscode) into a .vsix with @vscode/vsce, offline (its
# npm packages installed by scripts/test.sh), and checks that the package holds what VS Code
# loads: the manifest, the client, the grammar, the language configuration and the language
# client library it requires.
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
required = ["extension.vsixmanifest", "extension/package.json", "extension/extension.js",
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
print(f"takt-st.vsix: {len(names)} files, client, grammar and language configuration and licence present")
PY
