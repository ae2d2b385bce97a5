// Compiles src/ and test/ once per run into a mirror tree of plain JavaScript, so that no test
// process pays for a TypeScript loader: every file otherwise went through tsx's resolve and load
// hooks again in each of the ~230 test processes. Only files changed since the last run are compiled.
import { createHash } from 'node:crypto';
import {
  type Dirent,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Options, version as swcVersion, transform } from '@swc/core';

// rewriteRelativeImportExtensions turns `./x.ts` specifiers into `./x.js`, as tsc does for
// tsconfig.build.json; @swc/types does not declare it yet.
const SWC_OPTIONS = {
  swcrc: false,
  configFile: false,
  isModule: true,
  sourceMaps: true,
  module: { type: 'es6' },
  jsc: {
    parser: { syntax: 'typescript' },
    target: 'es2023',
    rewriteRelativeImportExtensions: true,
    transform: { verbatimModuleSyntax: true },
  },
} as Options;

/** Bumped when the output of this file changes meaning, so an older tree is rebuilt. */
const FORMAT = 1;

function listTs(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : listTs(root, rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/**
 * Code that finds files next to itself (fixtures, migrations, docs, child-process entry points)
 * keeps finding them: import.meta names the source file, not its compiled copy.
 */
function pinImportMeta(code: string, source: string): string {
  return code
    .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(source).href))
    .replace(/\bimport\.meta\.dirname\b/g, JSON.stringify(dirname(source)))
    .replace(/\bimport\.meta\.filename\b/g, JSON.stringify(source));
}

function writeAtomically(file: string, text: string): void {
  // Two runs in one checkout may compile at once; a reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

const mtime = (file: string): number => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
};

export interface CompileResult {
  outDir: string;
  compiled: number;
  total: number;
  ms: number;
}

/** Compiles `dirs` under `root` into `outDir`; `outOf(rel)` is where a source's output lands. */
export async function compileTree(root: string, dirs: string[], outDir: string): Promise<CompileResult> {
  const started = performance.now();
  const stamp = join(outDir, '.stamp');
  const expected = createHash('sha256')
    .update(JSON.stringify({ FORMAT, swcVersion, SWC_OPTIONS, root }))
    .digest('hex');
  let current = '';
  try {
    current = readFileSync(stamp, 'utf8');
  } catch {}
  if (current !== expected) rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const sources = dirs.flatMap((d) => listTs(root, d));
  const stale = sources.filter((rel) => mtime(join(root, rel)) > mtime(outputOf(outDir, rel)));
  await Promise.all(
    stale.map(async (rel) => {
      const source = join(root, rel);
      const out = outputOf(outDir, rel);
      const { code, map } = await transform(readFileSync(source, 'utf8'), {
        ...SWC_OPTIONS,
        filename: source,
        sourceFileName: relative(dirname(out), source),
      });
      mkdirSync(dirname(out), { recursive: true });
      if (map) writeAtomically(`${out}.map`, map);
      const mapRef = map ? `\n//# sourceMappingURL=${out.slice(dirname(out).length + 1)}.map\n` : '\n';
      writeAtomically(out, pinImportMeta(code, source) + mapRef);
    }),
  );
  // A source deleted since the last run leaves no test behind to be run by mistake.
  const wanted = new Set(sources.map((rel) => outputOf(outDir, rel)));
  for (const d of dirs) removeOrphans(join(outDir, d), wanted);
  writeFileSync(stamp, expected);
  return { outDir, compiled: stale.length, total: sources.length, ms: performance.now() - started };
}

export const outputOf = (outDir: string, rel: string): string => join(outDir, rel.replace(/\.ts$/, '.js'));

function removeOrphans(dir: string, wanted: Set<string>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) removeOrphans(p, wanted);
    else if (e.name.endsWith('.js') && !wanted.has(p)) rmSync(p, { force: true });
    else if (e.name.endsWith('.js.map') && !wanted.has(p.slice(0, -4))) rmSync(p, { force: true });
  }
}
