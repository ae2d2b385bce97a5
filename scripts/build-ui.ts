// Builds the built-in login UI and account page (ui/) into dist/ui: TypeScript compiled to
// browser ES modules by tsc (ui/tsconfig.json), the HTML and CSS copied as they are, and uqr's
// ES module (the QR code encoder) copied to vendor/uqr.js. No bundler: the server serves the
// folder as static files (src/main/builtin-ui.routes.ts).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const src = join(root, 'ui');
const out = join(root, 'dist', 'ui');

rmSync(out, { recursive: true, force: true });
const require = createRequire(import.meta.url);
// The package's own command (its `bin`), found through its package.json, which it exports.
const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(src, 'tsconfig.json')], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

const copyStatic = (dir: string) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyStatic(path);
    else if (['.html', '.css'].includes(extname(name))) {
      const target = join(out, relative(src, path));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(path, target);
    }
  }
};
copyStatic(src);

const uqr = join(dirname(require.resolve('uqr')), 'index.mjs');
mkdirSync(join(out, 'vendor'), { recursive: true });
copyFileSync(uqr, join(out, 'vendor', 'uqr.js'));
process.stdout.write(`login UI built into ${relative(root, out)}\n`);
