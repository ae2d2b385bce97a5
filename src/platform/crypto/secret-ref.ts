// Resolves operator secret references (spec doc 2, Authentication 6): file:, env:, cred: and
// kms:, plus literals outside production. Messages name the setting and the reference kind but
// never the secret, because start-up errors end up in logs.

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../config/settings.ts';

export class SecretRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretRefError';
  }
}

export interface SecretRefContext {
  env: NodeJS.ProcessEnv;
  environment: Environment;
  kms: { command: string | null; timeoutMs: number };
  /** The setting being resolved, e.g. `keys.root.2`; every message starts with it. */
  what: string;
}

const KMS_MAX_OUTPUT = 8 * 1024;

/** Returns the raw bytes a reference points to. */
export function resolveSecretRef(ref: string, ctx: SecretRefContext): Promise<Buffer> {
  return resolve(ref, ctx, false);
}

/** Resolves a reference holding a 32-byte key written as hex or base64 (padded or not, either alphabet). */
export async function resolveKey32(ref: string, ctx: SecretRefContext): Promise<Buffer> {
  const text = (await resolveSecretRef(ref, ctx)).toString('utf8').trim();
  if (/^[0-9a-f]{64}$/i.test(text)) return Buffer.from(text, 'hex');
  const unpadded = text.replace(/={1,2}$/, '');
  // 43 base64 characters carry exactly 32 bytes; the padded form adds one '='.
  if (/^[A-Za-z0-9+/_-]{43}$/.test(unpadded) && (text.length === 43 || text === `${unpadded}=`)) {
    const key = Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return key;
  }
  throw new SecretRefError(
    `${ctx.what}: ${kindOf(ref)} reference does not hold a 32-byte key as 64 hex characters or base64 ` +
      `(got ${text.length} characters)`,
  );
}

/** Resolves server.metrics_token; a literal is allowed everywhere because it only guards internal paths. */
export async function resolveToken(ref: string, ctx: SecretRefContext): Promise<string> {
  const text = (await resolve(ref, ctx, true)).toString('utf8').trim();
  if (!text) throw new SecretRefError(`${ctx.what}: ${kindOf(ref)} reference resolves to an empty token`);
  return text;
}

function kindOf(ref: string): string {
  const m = /^(file|env|cred|kms|vault):/.exec(ref);
  return m ? `${m[1]}:` : 'literal';
}

async function resolve(ref: string, ctx: SecretRefContext, allowLiteral: boolean): Promise<Buffer> {
  const fail = (why: string) => new SecretRefError(`${ctx.what}: ${why}`);
  const colon = ref.indexOf(':');
  const scheme = colon > 0 ? ref.slice(0, colon) : '';
  const rest = ref.slice(colon + 1);
  switch (scheme) {
    case 'file':
      if (!rest) throw fail('file: reference needs a path');
      return readSecretFile(rest, 'file:', ctx);
    case 'env': {
      if (!rest) throw fail('env: reference needs a variable name');
      const value = ctx.env[rest];
      if (value === undefined || value === '') throw fail(`environment variable ${rest} is not set`);
      return Buffer.from(value, 'utf8');
    }
    case 'cred': {
      // systemd LoadCredential= puts each credential as a file in $CREDENTIALS_DIRECTORY.
      const dir = ctx.env.CREDENTIALS_DIRECTORY;
      if (!rest || rest.includes('/') || rest === '.' || rest === '..') {
        throw fail('cred: reference needs a credential name without slashes');
      }
      if (!dir) throw fail(`cred:${rest} needs CREDENTIALS_DIRECTORY, which is not set`);
      return readSecretFile(join(dir, rest), 'cred:', ctx);
    }
    case 'kms':
      if (!rest) throw fail('kms: reference needs a path');
      return unwrapWithKms(ref, await readSecretFile(rest, 'kms:', ctx), ctx);
    case 'vault':
      throw fail('vault: references are not supported by this version; use file:, env:, cred: or kms:');
    default:
      if (ctx.environment === 'production' && !allowLiteral) {
        throw fail('literal keys are refused in production; use file:, env:, cred: or kms:');
      }
      if (!ref) throw fail('empty value');
      return Buffer.from(ref, 'utf8');
  }
}

async function readSecretFile(path: string, kind: string, ctx: SecretRefContext): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new SecretRefError(`${ctx.what}: cannot read ${kind} file ${path} (${code})`);
  }
}

// The command runs in its own process group so a timeout also kills whatever the shell started;
// otherwise a grandchild could keep the output pipe, and start-up, hanging.
function unwrapWithKms(ref: string, wrapped: Buffer, ctx: SecretRefContext): Promise<Buffer> {
  const { command, timeoutMs } = ctx.kms;
  const fail = (why: string) => new SecretRefError(`${ctx.what}: kms: unwrap ${why}`);
  if (!command) return Promise.reject(fail('needs keys.kms.command, which is not set'));
  return new Promise((resolvePromise, reject) => {
    const child = spawn('/bin/sh', ['-c', command], {
      env: { ...ctx.env, KMS_KEY_REF: ref },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let errText = '';
    let settled = false;
    const finish = (err: SecretRefError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        killGroup(child.pid);
        reject(err);
      } else resolvePromise(Buffer.concat(out));
    };
    const timer = setTimeout(() => finish(fail(`timed out after ${timeoutMs} ms`)), timeoutMs);
    child.on('error', (e) => finish(fail(`could not start /bin/sh (${e.message})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > KMS_MAX_OUTPUT) finish(fail('output exceeds 8 KiB'));
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      errText = (errText + chunk.toString('utf8')).slice(0, 200);
    });
    child.on('close', (code, signal) => {
      if (code === 0) return finish(null);
      const detail = errText.trim() ? `: ${errText.trim().split('\n')[0]}` : '';
      finish(fail(`command failed (${signal ?? `exit status ${code}`})${detail}`));
    });
    // A command that ignores stdin closes the pipe early; that is not an error in itself.
    child.stdin.on('error', () => {});
    child.stdin.end(wrapped);
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
