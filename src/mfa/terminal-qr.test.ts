import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { totpUri } from './otpauth-uri.ts';
import { qrModules, renderTerminalQr } from './terminal-qr.ts';

const uri = totpUri({
  issuer: 'Proud Auth',
  account: 'alice@example.test',
  secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
});

// Inverse of the plain rendering for a dark terminal: each glyph holds a top and a bottom module
// (true = dark); a glyph paints light modules.
const glyphs: Record<string, [boolean, boolean]> = {
  '\u2588': [false, false],
  '\u2580': [false, true],
  '\u2584': [true, false],
  ' ': [true, true],
};
// For a light terminal a glyph paints dark modules: the same table, inverted.
const lightGlyphs: Record<string, [boolean, boolean]> = Object.fromEntries(
  Object.entries(glyphs).map(([g, [t, b]]) => [g, [!t, !b]]),
);

function unrender(text: string, table = glyphs): boolean[][] {
  const rows: boolean[][] = [];
  for (const line of text.split('\n')) {
    const cells = [...line].map((c) => table[c]);
    assert.ok(
      cells.every((c) => c !== undefined),
      `unexpected glyph in ${JSON.stringify(line)}`,
    );
    rows.push(
      cells.map((c) => c![0]),
      cells.map((c) => c![1]),
    );
  }
  return rows;
}

function hasZbarimg(): boolean {
  try {
    execFileSync('zbarimg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// Reads what a phone camera would, with zbar.
function zbarDecode(modules: boolean[][]): string {
  const scale = 4;
  const n = modules.length * scale;
  const pixels = Buffer.alloc(n * n);
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++)
      pixels[y * n + x] = modules[Math.floor(y / scale)]![Math.floor(x / scale)] ? 0 : 255;
  }
  const dir = mkdtempSync(join(tmpdir(), 'qr-'));
  try {
    const file = join(dir, 'qr.pgm');
    writeFileSync(file, Buffer.concat([Buffer.from(`P5\n${n} ${n}\n255\n`), pixels]));
    return execFileSync('zbarimg', ['--raw', '-q', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).replace(/\n$/, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('terminal QR', () => {
  test('case=the plain rendering holds exactly the QR modules', () => {
    const modules = qrModules(uri);
    const text = renderTerminalQr(uri);
    const lines = text.split('\n');
    assert.equal(lines.length, Math.ceil(modules.length / 2));
    for (const line of lines) assert.equal([...line].length, modules.length);
    assert.deepEqual(unrender(text).slice(0, modules.length), modules);
  });

  test('case=the light-terminal rendering holds the same modules, painted the other way', () => {
    const modules = qrModules(uri);
    const text = renderTerminalQr(uri, { style: 'light' });
    assert.deepEqual(unrender(text, lightGlyphs).slice(0, modules.length), modules);
    assert.notEqual(text, renderTerminalQr(uri, { style: 'dark' }));
    assert.equal(renderTerminalQr(uri), renderTerminalQr(uri, { style: 'dark' }), 'dark is the default');
  });

  test('case=a light quiet zone of 4 modules surrounds the symbol', () => {
    const modules = qrModules(uri);
    const size = modules.length;
    for (let i = 0; i < size; i++) {
      for (const k of [0, 1, 2, 3]) {
        assert.equal(modules[k]![i], false);
        assert.equal(modules[size - 1 - k]![i], false);
        assert.equal(modules[i]![k], false);
        assert.equal(modules[i]![size - 1 - k], false);
      }
    }
  });

  test('case=the ANSI rendering sets both colours on every cell and resets each line', () => {
    const modules = qrModules(uri);
    const lines = renderTerminalQr(uri, { style: 'ansi' }).split('\n');
    assert.equal(lines.length, Math.ceil(modules.length / 2));
    for (const line of lines) {
      const visible = line.replaceAll('\u001b[', '<CSI>');
      assert.equal(visible.match(/<CSI>(30|97);(40|107)m\u2580/g)?.length, modules.length);
      assert.ok(line.endsWith('\u001b[0m'));
    }
  });

  test('case=an independent decoder reads the URI back (zbarimg)', {
    skip: hasZbarimg() ? false : 'zbarimg is not on PATH (apt-get install zbar-tools)',
  }, () => {
    assert.equal(zbarDecode(qrModules(uri)), uri);
  });
});
