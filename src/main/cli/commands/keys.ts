// identity-cli generate-root-key and identity-cli doctor (spec doc 2, operator tools; Key custody).
import { generateRootKey } from '../../../platform/crypto/keyring.ts';
import type { AppContext } from '../../context.ts';
import { CONFIG_FLAG, parseFlags, withCliContext } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';

export async function generateRootKeyCommand(argv: string[]): Promise<string> {
  // --config is accepted like everywhere else; a new key needs nothing from it.
  const { rest } = parseFlags(argv, CONFIG_FLAG);
  if (rest.length > 0) throw new CliError('usage: identity-cli generate-root-key');
  return generateRootKey();
}

/** Fingerprints only: the report can be pasted into a ticket without exposing a key. */
export async function doctor(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, CONFIG_FLAG);
  if (rest.length > 0) throw new CliError('usage: identity-cli doctor [--config FILE]');
  return withCliContext(flags, async (ctx) => {
    const report = await doctorReport(ctx);
    if (!report.ok) process.exitCode = 1;
    return report;
  });
}

/**
 * The key hierarchy as this process sees it: root and pepper versions with fingerprints, which
 * root versions the realms' signing keys (all but retired ones) are sealed under, and any such
 * version this process lacks. Used after each step of a root-key rotation (docs/keys.md).
 */
export async function doctorReport(ctx: AppContext) {
  const configured = new Set(ctx.keyring?.versions() ?? []);
  const used = await ctx.db.query<{ root_key_version: number; n: string }>(
    `select root_key_version, count(*) as n from signing_keys where state <> 'retired' group by root_key_version`,
  );
  const missing = used.rows.map((r) => Number(r.root_key_version)).filter((v) => !configured.has(v));
  return {
    ok: ctx.keyring !== null && missing.length === 0,
    key_provider: ctx.keyProvider,
    database: ctx.db.kind,
    root_keys: (ctx.keyring?.fingerprints() ?? []).map((f) => ({
      ...f,
      active: f.version === ctx.keyring?.activeVersion,
    })),
    pepper_keys: ctx.pepper
      .fingerprints()
      .map((f) => ({ ...f, active: f.version === ctx.pepper.activeVersion })),
    signing_keys_by_root_version: Object.fromEntries(
      used.rows.map((r) => [String(r.root_key_version), Number(r.n)]),
    ),
    missing_root_versions: missing,
  };
}
