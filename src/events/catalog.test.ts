// The catalog is complete both ways (docs/events.md): every type in it has an emitting call site
// in src/ (a call to addEvent, or a recorder's event, auditWithEvent or auditAlong naming it), except the documented types whose
// operation does not exist yet; and those have none, so emitting one means updating the
// exemption. That every type written is in the catalog the compiler checks (EventType), and
// test/integration/events/catalog-emission.test.ts checks the rows operations really write.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { EVENT_CATALOG, EVENT_TYPES, NOT_EMITTED_YET } from './catalog.ts';

const SRC = join(import.meta.dirname, '..');
const EMITS = /\baddEvent\s*\(|\.event\s*\(|\.auditWithEvent\s*\(|\.auditAlong\s*(<[^(]*>)?\s*\(/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

/** Files that emit events, with the catalog type names written in them as string literals. */
function emittingFiles(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    if (rel === join('events', 'catalog.ts')) continue;
    const text = readFileSync(file, 'utf8');
    if (!EMITS.test(text)) continue;
    out.set(rel, new Set(EVENT_TYPES.filter((type) => text.includes(`'${type}'`))));
  }
  return out;
}

test('case=every catalog type is emitted somewhere, except the documented ones', () => {
  const files = emittingFiles();
  const emitted = new Set([...files.values()].flatMap((s) => [...s]));
  const missing = EVENT_TYPES.filter((t) => !emitted.has(t) && !(t in NOT_EMITTED_YET));
  assert.deepEqual(missing, [], 'catalog types with no emitting call site');
  const stale = Object.keys(NOT_EMITTED_YET).filter((t) => emitted.has(t));
  assert.deepEqual(stale, [], 'emitted now: remove from NOT_EMITTED_YET and update docs/events.md');
});

test('case=the exemptions are catalog types with a reason', () => {
  for (const [type, why] of Object.entries(NOT_EMITTED_YET)) {
    assert.ok(type in EVENT_CATALOG, type);
    assert.ok(why && why.length > 10, type);
    assert.match(EVENT_CATALOG[type as keyof typeof EVENT_CATALOG].emittedBy, /^none yet/);
  }
});

test('case=the catalog is the spec list: 31 types, each data member named once', () => {
  assert.equal(EVENT_TYPES.length, 31);
  for (const type of EVENT_TYPES) {
    const e = EVENT_CATALOG[type];
    assert.equal(new Set(e.data).size, e.data.length, type);
    for (const m of e.standardOnly) assert.ok((e.data as readonly string[]).includes(m), `${type}.${m}`);
  }
});
