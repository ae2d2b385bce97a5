// deploy/prometheus/alerts.yml: promtool accepts the rules and their unit tests pass, and every
// metric the rules read is one the service registers. promtool comes from .ci/run (Debian's
// prometheus package); without it these tests fail rather than pass unchecked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const RULES_DIR = join(ROOT, 'deploy', 'prometheus');

function promtool(args: readonly string[]): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd: RULES_DIR, encoding: 'utf8' });
  assert.equal(r.error, undefined, 'promtool must be on PATH (.ci/run installs the prometheus package)');
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Every `service_*` name written as a string literal in src/: the families the service registers. */
function registeredNames(): Set<string> {
  const names = new Set<string>();
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' });
  for (const f of files) {
    if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
    const text = readFileSync(join(ROOT, 'src', f), 'utf8');
    for (const m of text.matchAll(/'(service_[a-z_]+)'/g)) names.add(m[1] as string);
  }
  return names;
}

describe('ops › deploy › Prometheus alert rules', () => {
  test('case=promtool check rules accepts alerts.yml', () => {
    const r = promtool(['check', 'rules', 'alerts.yml']);
    assert.equal(r.status, 0, r.out);
  });

  test('case=promtool test rules passes the unit tests of every alert', () => {
    const r = promtool(['test', 'rules', 'alerts.test.yml']);
    assert.equal(r.status, 0, r.out);
    // Each alert of the rule file has at least one unit test that expects it to fire.
    const rules = readFileSync(join(RULES_DIR, 'alerts.yml'), 'utf8');
    const tests = readFileSync(join(RULES_DIR, 'alerts.test.yml'), 'utf8');
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1] as string);
    assert.ok(alerts.length >= 12);
    for (const a of alerts)
      assert.match(tests, new RegExp(`alertname: ${a}\\n\\s+exp_alerts:\\n\\s+- exp_labels`), a);
  });

  test('case=every metric the rules read is registered by the service', () => {
    const names = registeredNames();
    const rules = readFileSync(join(RULES_DIR, 'alerts.yml'), 'utf8');
    const exprs = [...rules.matchAll(/expr: (.+)/g)].map((m) => m[1] as string);
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/service_[a-z_]+/g)].map((m) => m[0])));
    assert.ok(used.size >= 10);
    for (const n of used) assert.ok(names.has(n), `${n} is not a metric of the service`);
  });
});
