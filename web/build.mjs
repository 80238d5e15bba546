// Builds the page into OUT (default dist/): index.html, app-<hash>.js and app-<hash>.css. The
// hashed names let the runtime serve the script and style sheet as immutable; index.html names
// them and is revalidated by its ETag. Nothing is loaded from elsewhere: a plant floor has no
// internet.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] ?? 'dist';
const here = new URL('.', import.meta.url).pathname;

const result = await build({
  entryPoints: { app: join(here, 'src/main.js') },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  write: false,
  outdir: 'out',
  legalComments: 'none',
  logLevel: 'warning',
});

mkdirSync(out, { recursive: true });
for (const f of readdirSync(out)) {
  rmSync(join(out, f), { recursive: true, force: true });
}
const names = {};
for (const file of result.outputFiles) {
  const ext = file.path.endsWith('.css') ? 'css' : 'js';
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  names[ext] = `app-${hash}.${ext}`;
  writeFileSync(join(out, names[ext]), file.contents);
}
const html = readFileSync(join(here, 'src/index.html'), 'utf8')
  .replace('@APP_JS@', names.js)
  .replace('@APP_CSS@', names.css);
writeFileSync(join(out, 'index.html'), html);
