// The VS Code extension's TextMate grammar (editors/vscode) over every ST file of examples/ and
// tests/st/: no token may get an invalid.* scope (the grammar marks characters it cannot place,
// so a string, comment or literal rule that ends too early shows up here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vsctm from 'vscode-textmate';
import oniguruma from 'vscode-oniguruma';
import { repo } from './support.mjs';

const require = createRequire(import.meta.url);
const grammarPath = path.join(repo, 'editors/vscode/syntaxes/iecst.tmLanguage.json');

function stFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) stFiles(p, out);
    else if (/\.(st|pou)$/i.test(name)) out.push(p);
  }
  return out;
}

async function loadGrammar() {
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) =>
      scope === 'source.iecst' ? vsctm.parseRawGrammar(readFileSync(grammarPath, 'utf8'), grammarPath) : null,
  });
  return registry.loadGrammar('source.iecst');
}

// "file:line:col text scope" for every token with an invalid scope.
function invalidTokens(grammar, file) {
  const bad = [];
  let state = vsctm.INITIAL;
  readFileSync(file, 'utf8').split(/\r?\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      const scope = t.scopes.find((s) => s.startsWith('invalid'));
      if (scope) bad.push(`${path.relative(repo, file)}:${i + 1}:${t.startIndex + 1} '${line.slice(t.startIndex, t.endIndex)}' ${scope}`);
    }
    state = r.ruleStack;
  });
  return bad;
}

test('the grammar places every character of the ST corpus', async () => {
  const grammar = await loadGrammar();
  const files = [...stFiles(path.join(repo, 'examples')), ...stFiles(path.join(repo, 'tests/st'))]
    .filter((f) => !f.includes(`${path.sep}invalid${path.sep}`) && !f.includes(`${path.sep}lexer${path.sep}`));
  assert.ok(files.length > 100, `found ${files.length} files`);
  const bad = files.flatMap((f) => invalidTokens(grammar, f));
  assert.deepEqual(bad.slice(0, 20), [], `${bad.length} invalid tokens`);
});

test('the grammar marks what ST cannot hold', async () => {
  const grammar = await loadGrammar();
  const scopes = (line) => grammar.tokenizeLine(line, vsctm.INITIAL).tokens.map((t) => t.scopes.at(-1));
  assert.ok(scopes('x := `y;').includes('invalid.illegal.character.iecst'));
  assert.ok(scopes("s := 'it$'s';").every((s) => !s.startsWith('invalid')));
  assert.ok(scopes('t := T#1h2m;').includes('constant.other.time.iecst'));
  assert.ok(scopes('(* a (* nested *) comment *)').every((s) => s.startsWith('comment')));
});
