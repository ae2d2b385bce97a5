// The deployment files of deploy/: the systemd units pass `systemd-analyze verify` (with the
// install prefix pointed at a folder holding an executable, since verify checks ExecStart) and
// carry the hardening options docs/deployment.md promises; the Containerfile installs through the
// same deploy/install.sh the packed-install test runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './install-kit.ts';

const UNITS = ['proudauth-serve.service', 'proudauth-worker.service'] as const;
const PREFIX = '/opt/proudauth';
const unitText = (name: string) => readFileSync(join(ROOT, 'deploy', 'systemd', name), 'utf8');

const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const NO_SYSTEMD = probe.error ? 'systemd-analyze is not on PATH (Debian package systemd)' : false;

/** The units, their prefix replaced by a folder whose node_modules/.bin/proudauth is executable. */
function unitsInScratch(t: { after(fn: () => void): void }): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-units-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'opt', 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'proudauth'), '#!/bin/sh\n');
  chmodSync(join(bin, 'proudauth'), 0o755);
  return UNITS.map((name) => {
    const path = join(dir, name);
    writeFileSync(path, unitText(name).replaceAll(PREFIX, join(dir, 'opt')));
    return path;
  });
}

describe('install › deployment files', () => {
  test('case=systemd-analyze verify accepts both units without a warning', { skip: NO_SYSTEMD }, (t) => {
    const r = spawnSync('systemd-analyze', ['verify', ...unitsInScratch(t)], { encoding: 'utf8' });
    // verify exits 0 on unknown keys and bad values too, and reports them on stderr.
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), '');
  });

  test('case=systemd-analyze security rates both units OK (exposure at most 2.0)', {
    skip: NO_SYSTEMD,
  }, (t) => {
    for (const path of unitsInScratch(t)) {
      const r = spawnSync('systemd-analyze', ['security', '--offline=yes', path], { encoding: 'utf8' });
      if (r.status !== 0 && /offline/.test(r.stderr)) return t.skip('this systemd-analyze has no --offline');
      const level = /Overall exposure level for \S+: (\d+\.\d+)/.exec(`${r.stdout}${r.stderr}`)?.[1];
      assert.ok(level, `${r.stdout}${r.stderr}`);
      assert.ok(Number(level) <= 2, `${path}: exposure ${level}`);
    }
  });

  test('case=both units run the installed program with the hardening options', () => {
    for (const name of UNITS) {
      const text = unitText(name);
      const command = name.includes('serve') ? 'serve' : 'worker';
      assert.match(text, new RegExp(`^ExecStart=${PREFIX}/node_modules/\\.bin/proudauth ${command}$`, 'm'));
      for (const option of [
        'NoNewPrivileges=yes',
        'ProtectSystem=strict',
        'ProtectHome=yes',
        'PrivateTmp=yes',
        'PrivateDevices=yes',
        'CapabilityBoundingSet=',
        'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX',
        'SystemCallFilter=@system-service',
        'User=proudauth',
        'KillSignal=SIGTERM',
      ])
        assert.match(text, new RegExp(`^${option}$`, 'm'), `${name}: ${option}`);
    }
  });

  test('case=the Containerfile installs through deploy/install.sh and says why it is not built here', () => {
    const text = readFileSync(join(ROOT, 'deploy', 'Containerfile'), 'utf8');
    const header = text
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .join('\n');
    assert.match(header, /cannot be built in this project's CI/);
    assert.match(header, /base-image registry/);
    assert.match(text, /^COPY deploy\/install\.sh (\S+)$/m);
    assert.match(text, /^RUN sh \/usr\/local\/lib\/proudauth\/install\.sh \/opt\/proudauth /m);
    assert.match(text, /^ENTRYPOINT \["\/opt\/proudauth\/node_modules\/\.bin\/proudauth"\]$/m);
  });
});
