import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  resolveKey32,
  resolveSecretRef,
  resolveToken,
  type SecretRefContext,
  SecretRefError,
} from './secret-ref.ts';

const dir = mkdtempSync(join(tmpdir(), 'proudauth-secret-ref-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const KEY = Buffer.from('00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff', 'hex');
const HEX = KEY.toString('hex');
const B64 = KEY.toString('base64');
const B64URL = KEY.toString('base64url');

function ctx(over: Partial<SecretRefContext> = {}): SecretRefContext {
  return {
    env: {},
    environment: 'development',
    kms: { command: null, timeoutMs: 5000 },
    what: 'keys.root.1',
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<SecretRefError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SecretRefError, `expected SecretRefError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

function assertNoSecret(err: Error, ...secrets: string[]): void {
  for (const s of secrets) assert.ok(!err.message.includes(s), `message leaks a secret: ${err.message}`);
}

describe('resolveSecretRef', () => {
  test('case=file: returns the file bytes', async () => {
    const file = join(dir, 'raw');
    writeFileSync(file, 'hello\n');
    assert.deepEqual(await resolveSecretRef(`file:${file}`, ctx()), Buffer.from('hello\n'));
    const err = await rejection(resolveSecretRef(`file:${join(dir, 'missing')}`, ctx()));
    assert.match(err.message, /^keys\.root\.1: cannot read file: file .*missing \(ENOENT\)/);
  });

  test('case=env: reads the variable and refuses an unset one', async () => {
    assert.equal((await resolveSecretRef('env:ROOT', ctx({ env: { ROOT: 'abc' } }))).toString(), 'abc');
    const err = await rejection(resolveSecretRef('env:ROOT', ctx()));
    assert.match(err.message, /keys\.root\.1: environment variable ROOT is not set/);
  });

  test('case=cred: reads from CREDENTIALS_DIRECTORY', async () => {
    const creds = join(dir, 'creds');
    mkdirSync(creds);
    writeFileSync(join(creds, 'root-1'), HEX);
    const env = { CREDENTIALS_DIRECTORY: creds };
    assert.equal((await resolveSecretRef('cred:root-1', ctx({ env }))).toString(), HEX);
    assert.match(
      (await rejection(resolveSecretRef('cred:root-1', ctx()))).message,
      /CREDENTIALS_DIRECTORY.*not set/,
    );
    assert.match(
      (await rejection(resolveSecretRef('cred:../root-1', ctx({ env })))).message,
      /without slashes/,
    );
    assert.match((await rejection(resolveSecretRef('cred:nope', ctx({ env })))).message, /ENOENT/);
  });

  test('case=vault: is not supported', async () => {
    const err = await rejection(resolveSecretRef('vault:secret/data/root#key', ctx()));
    assert.equal(
      err.message,
      'keys.root.1: vault: references are not supported by this version; use file:, env:, cred: or kms:',
    );
  });

  test('case=literal is allowed in development and refused in production', async () => {
    assert.equal((await resolveSecretRef(HEX, ctx())).toString(), HEX);
    const err = await rejection(
      resolveSecretRef(HEX, ctx({ environment: 'production', what: 'keys.pepper.2' })),
    );
    assert.match(err.message, /^keys\.pepper\.2: literal keys are refused in production/);
    assertNoSecret(err, HEX);
  });
});

describe('resolveSecretRef › kms:', () => {
  const wrapped = join(dir, 'root.wrapped');
  writeFileSync(wrapped, HEX);
  const kms = (command: string, timeoutMs = 5000) => ctx({ kms: { command, timeoutMs } });

  test('case=the command gets the file on stdin and KMS_KEY_REF in its environment', async () => {
    const key = await resolveKey32(`kms:${wrapped}`, kms('cat'));
    assert.deepEqual(key, KEY);
    const ref = await resolveSecretRef(`kms:${wrapped}`, kms('printf %s "$KMS_KEY_REF"'));
    assert.equal(ref.toString(), `kms:${wrapped}`);
  });

  test('case=no command configured', async () => {
    assert.match(
      (await rejection(resolveSecretRef(`kms:${wrapped}`, ctx()))).message,
      /needs keys\.kms\.command/,
    );
  });

  test('case=non-zero exit is an error that does not echo the output', async () => {
    const err = await rejection(resolveSecretRef(`kms:${wrapped}`, kms('cat; echo denied >&2; exit 1')));
    assert.match(err.message, /^keys\.root\.1: kms: unwrap command failed \(exit status 1\): denied$/);
    assertNoSecret(err, HEX);
  });

  test('case=a command running past the timeout is killed', async () => {
    const err = await rejection(resolveSecretRef(`kms:${wrapped}`, kms('sleep 5; cat', 200)));
    assert.match(err.message, /timed out after 200 ms/);
  });

  test('case=output over 8 KiB is refused', async () => {
    const err = await rejection(resolveSecretRef(`kms:${wrapped}`, kms('head -c 9000 /dev/zero')));
    assert.match(err.message, /output exceeds 8 KiB/);
    assert.equal((await resolveSecretRef(`kms:${wrapped}`, kms('head -c 8192 /dev/zero'))).length, 8192);
  });
});

describe('resolveKey32', () => {
  for (const [label, text] of [
    ['hex', HEX],
    ['upper-case hex with newline', `${HEX.toUpperCase()}\n`],
    ['padded base64', B64],
    ['unpadded base64', B64.replace(/=+$/, '')],
    ['base64url', B64URL],
  ] as [string, string][]) {
    test(`case=${label}`, async () => {
      assert.deepEqual(await resolveKey32('env:K', ctx({ env: { K: text } })), KEY);
    });
  }

  for (const [label, text] of [
    ['short hex', HEX.slice(2)],
    ['16-byte base64', KEY.subarray(0, 16).toString('base64')],
    ['48-byte base64', Buffer.concat([KEY, KEY.subarray(0, 16)]).toString('base64')],
    ['double padding', `${B64}=`],
    ['passphrase', 'correct horse battery staple'],
  ] as [string, string][]) {
    test(`case=${label} is refused without echoing it`, async () => {
      const err = await rejection(resolveKey32('env:K', ctx({ env: { K: text }, what: 'keys.root.3' })));
      assert.match(err.message, /^keys\.root\.3: env: reference does not hold a 32-byte key/);
      assertNoSecret(err, text.trim());
    });
  }
});

describe('resolveToken', () => {
  test('case=literal tokens are allowed in production and trimmed', async () => {
    assert.equal(await resolveToken(' scrape-token \n', ctx({ environment: 'production' })), 'scrape-token');
  });

  test('case=references resolve and empty tokens are refused', async () => {
    assert.equal(await resolveToken('env:T', ctx({ env: { T: 'abc\n' } })), 'abc');
    const err = await rejection(
      resolveToken('env:T', ctx({ env: { T: '  ' }, what: 'server.metrics_token' })),
    );
    assert.match(err.message, /^server\.metrics_token: env: reference resolves to an empty token/);
  });
});
