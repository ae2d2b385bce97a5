// identity-cli config validate|import FILE (docs/configuration-as-code.md, "From the command
// line"): sends a configuration document to the realm's API with the stored sign-in, prints the
// plan readably (or as JSON with --json) and exits 1 when the plan has errors or the server refuses
// the import, so a deployment pipeline can gate on it.
import { readFileSync } from 'node:fs';
import { parseFlags } from '../../../platform/cli/flags.ts';
import { adminRequest, problemSummary, requireSignIn, responseBody } from '../admin-api.ts';
import { CliError } from '../cli-error.ts';
import { cliIo, cliPath } from '../cli-io.ts';
import { serverFlag } from '../configured-server.ts';
import { configExport, EXPORT_USAGE } from './config-export.ts';

const USAGE = `usage: identity-cli config validate FILE [--reconcile] [--json] [--realm NAME] [--server URL] [--credentials FILE]
       identity-cli config import FILE [--dry-run] [--reconcile] [--expected-policy-revision N] [--json]
                                       [--realm NAME] [--server URL] [--credentials FILE]
FILE may be - for standard input; every form takes --config FILE
${EXPORT_USAGE.replace('usage: ', '       ')}`;

type Json = Record<string, unknown>;

function readDocument(source: string): string {
  let text: string;
  try {
    text = source === '-' ? cliIo().readStdin() : readFileSync(cliPath(source), 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${source === '-' ? 'standard input' : source}: ${(e as Error).message}`);
  }
  try {
    JSON.parse(text);
  } catch (e) {
    throw new CliError(`${source} is not JSON: ${(e as Error).message}`);
  }
  return text;
}

/** Sets expected_policy_revision when the document has none (the export never writes it). */
function withExpectedRevision(text: string, revision: number | undefined): string {
  if (revision === undefined) return text;
  const doc = JSON.parse(text) as unknown;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return text;
  if ('expected_policy_revision' in doc)
    throw new CliError('the document sets expected_policy_revision already');
  return JSON.stringify({ ...doc, expected_policy_revision: revision });
}

const KINDS = ['resources', 'clients', 'permissions', 'roles'] as const;

/** The plan as lines a person reads in a pipeline log. */
export function formatPlan(plan: Json, heading: string): string {
  const lines = [heading];
  const policy = plan.policy as Json | undefined;
  if (policy && policy.action !== 'absent') {
    const sections = (policy.sections as string[]).join(', ');
    lines.push(
      `policy: ${policy.action} (current revision ${policy.current_revision}${sections ? `; sections ${sections}` : ''})`,
    );
  }
  for (const kind of KINDS) {
    const k = plan[kind] as Record<string, string[]> | undefined;
    if (!k) continue;
    const counts = `create ${k.create?.length ?? 0}, update ${k.update?.length ?? 0}, unchanged ${k.unchanged?.length ?? 0}`;
    lines.push(`${kind}: ${counts}`);
    for (const n of k.create ?? []) lines.push(`  + ${n}`);
    for (const n of k.update ?? []) lines.push(`  ~ ${n}`);
    for (const n of k.differs ?? []) lines.push(`  ! ${n} differs (left as it is; --reconcile updates it)`);
  }
  const grants = plan.client_resource_grants as
    | Record<string, { client_id: string; resource: string }[]>
    | undefined;
  if (grants) {
    lines.push(
      `client_resource_grants: create ${grants.create?.length ?? 0}, update ${grants.update?.length ?? 0}, unchanged ${grants.unchanged?.length ?? 0}`,
    );
    for (const g of grants.create ?? []) lines.push(`  + ${g.client_id} -> ${g.resource}`);
    for (const g of grants.update ?? []) lines.push(`  ~ ${g.client_id} -> ${g.resource}`);
  }
  const missing = (plan.missing_permissions as string[] | undefined) ?? [];
  if (missing.length > 0) lines.push(`missing permissions: ${missing.join(', ')}`);
  const errors = (plan.errors as { path: string; code: string; detail?: string }[] | undefined) ?? [];
  if (errors.length > 0) {
    lines.push(`errors (${errors.length}):`);
    for (const e of errors) lines.push(`  ${e.path || '/'}: ${e.code}${e.detail ? ` (${e.detail})` : ''}`);
  }
  return lines.join('\n');
}

export async function config(argv: string[]): Promise<unknown> {
  const [sub, ...args] = argv;
  if (sub === 'export') return configExport(args);
  if (sub !== 'validate' && sub !== 'import') throw new CliError(USAGE);
  const { flags, rest } = parseFlags(args, {
    reconcile: { type: 'bool' },
    'dry-run': { type: 'bool' },
    'expected-policy-revision': { type: 'int' },
    json: { type: 'bool' },
    realm: { type: 'string' },
    server: { type: 'string' },
    credentials: { type: 'string' },
    config: { type: 'string' },
  });
  const [file, ...extra] = rest;
  if (!file || extra.length > 0) throw new CliError(USAGE);
  if (sub === 'validate' && (flags['dry-run'] || flags['expected-policy-revision'] !== undefined))
    throw new CliError('--dry-run and --expected-policy-revision are for config import');
  const body = withExpectedRevision(
    readDocument(file),
    flags['expected-policy-revision'] as number | undefined,
  );
  const signIn = requireSignIn({
    realm: flags.realm as string | undefined,
    server: serverFlag(flags),
    credentials: flags.credentials as string | undefined,
  });
  const query = new URLSearchParams();
  if (flags.reconcile) query.set('mode', 'reconcile');
  if (flags['dry-run']) query.set('dry_run', 'true');
  const path = `/configuration/${sub === 'validate' ? 'validate' : 'imports'}${query.size > 0 ? `?${query}` : ''}`;
  const r = await adminRequest(signIn, { method: 'POST', path, body });
  const out = (await responseBody(r.response)) as Json | undefined;
  const isPlan = typeof out === 'object' && out !== null && 'errors' in out && 'resources' in out;
  const hasErrors = isPlan && ((out.errors as unknown[]) ?? []).length > 0;
  if (flags.json) cliIo().stdout.write(`${JSON.stringify(out ?? null, null, 2)}\n`);
  else if (isPlan) {
    const realm = signIn.credential.realm;
    const what =
      sub === 'validate'
        ? 'validation only, nothing applied'
        : out.applied === true
          ? 'applied'
          : flags['dry-run'] && r.ok
            ? 'dry run, nothing applied'
            : 'not applied';
    cliIo().stdout.write(`${formatPlan(out, `realm ${realm}, mode ${String(out.mode)}: ${what}`)}\n`);
  }
  if (!r.ok || hasErrors) {
    if (!r.ok) cliIo().stderr.write(`identity-cli: POST ${path}: ${problemSummary(r.status, out)}\n`);
    else cliIo().stderr.write('identity-cli: the configuration document has errors\n');
    cliIo().exitCode = 1;
  }
  return undefined;
}
