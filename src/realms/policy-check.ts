// Validating a realm policy (spec doc 1, Policy; Passkey policy): a patch is checked member by
// member against policy-schema.ts (unknown members refused, names matched ignoring ASCII case,
// null treated as absent), and the merged result is checked against the rules that span members.
// Pure: the settings API and the configuration import both call it.
import { jsonMembers } from '../platform/http/decode.ts';
import { foldMemberName } from '../platform/http/strict-json.ts';
import {
  POLICY_SCHEMA,
  type PolicyNode,
  SIGN_IN_METHODS,
  STANDARD_PROFILE_ATTRIBUTES,
} from './policy-schema.ts';

export type Json = Record<string, unknown>;
export type PolicyPath = readonly (string | number)[];

export interface PolicyIssue {
  /** Where, from the policy object's root: section, member, list index... */
  path: PolicyPath;
  code: string;
  detail: string;
}

export interface PolicyRuleOptions {
  /** The operator switch webauthn.related_origins (spec doc 1, Passkey policy 3). */
  relatedOriginsEnabled: boolean;
  /** environment is production: the login UI is served over https. */
  production: boolean;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 6901 pointer of a path, under `prefix` (e.g. "/policy"). */
export function jsonPointer(path: PolicyPath, prefix = ''): string {
  return prefix + path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The dotted field form problem bodies use elsewhere: a.b[0].c */
export function fieldOf(path: PolicyPath, prefix = ''): string {
  let out = prefix;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out;
}

// ---- member by member ------------------------------------------------------------------------

const FAIL = Symbol('fail');

function walk(node: PolicyNode, v: unknown, path: PolicyPath, issues: PolicyIssue[]): unknown {
  const bad = (code: string, detail: string) => {
    issues.push({ path, code, detail });
    return FAIL;
  };
  switch (node.t) {
    case 'bool':
      return typeof v === 'boolean' ? v : bad('type', 'expected true or false');
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) return bad('type', 'expected an integer');
      if (v < node.min) return bad('too_small', `at least ${node.min}`);
      if (v > node.max) return bad('too_large', `at most ${node.max}`);
      return v;
    case 'enum':
      if (typeof v !== 'string') return bad('type', 'expected a string');
      return node.values.includes(v)
        ? v
        : bad('not_allowed', `one of: ${node.values.map((x) => JSON.stringify(x)).join(', ')}`);
    case 'str': {
      if (typeof v !== 'string') return bad('type', 'expected a string');
      if (v.length < node.min) return bad('too_short', `at least ${node.min} characters`);
      if (v.length > node.max) return bad('too_long', `at most ${node.max} characters`);
      if (v.includes('\0')) return bad('pattern', 'no NUL characters');
      const why = v === '' ? null : (node.check?.(v) ?? null);
      return why === null ? v : bad('pattern', why);
    }
    case 'list': {
      if (!Array.isArray(v)) return bad('type', 'expected an array');
      if (v.length < (node.min ?? 0)) return bad('too_few', `at least ${node.min} items`);
      if (v.length > node.max) return bad('too_many', `at most ${node.max} items`);
      const out: unknown[] = [];
      const seen = new Set<string>();
      let ok = true;
      v.forEach((item, i) => {
        const r = walk(node.item, item, [...path, i], issues);
        if (r === FAIL) {
          ok = false;
          return;
        }
        const key = JSON.stringify(r);
        if (node.unique && seen.has(key)) {
          // A repeated value breaks a rule (422); a member given twice (below) is a shape error (400).
          issues.push({ path: [...path, i], code: 'not_unique', detail: 'repeats an earlier item' });
          ok = false;
        }
        seen.add(key);
        out.push(r);
      });
      return ok ? out : FAIL;
    }
    case 'obj':
      return walkObject(node.members, node.required ?? [], v, path, issues);
  }
}

function walkObject(
  members: Record<string, PolicyNode>,
  required: readonly string[],
  v: unknown,
  path: PolicyPath,
  issues: PolicyIssue[],
): Json | typeof FAIL {
  if (!isObject(v)) {
    issues.push({ path, code: 'type', detail: 'expected an object' });
    return FAIL;
  }
  const byFolded = new Map(Object.keys(members).map((m) => [foldMemberName(m), m]));
  const out: Json = {};
  const seen = new Set<string>();
  let ok = true;
  for (const [given, value] of jsonMembers(v)) {
    const name = byFolded.get(foldMemberName(given));
    if (name === undefined) {
      issues.push({ path: [...path, given], code: 'unknown_member', detail: 'not a member of the policy' });
      ok = false;
      continue;
    }
    if (seen.has(name)) {
      issues.push({ path: [...path, name], code: 'duplicate', detail: 'the member is given twice' });
      ok = false;
      continue;
    }
    seen.add(name);
    // Decoding rule 5: null is absent.
    if (value === null || value === undefined) continue;
    const r = walk(members[name] as PolicyNode, value, [...path, name], issues);
    if (r === FAIL) ok = false;
    else out[name] = r;
  }
  for (const name of required) {
    if (!(name in out) && ok) {
      issues.push({ path: [...path, name], code: 'required', detail: 'the member is required' });
      ok = false;
    }
  }
  return ok ? out : FAIL;
}

/**
 * A policy patch (or a whole policy) checked member by member: the value with canonical member
 * names and null members dropped, or the issues found.
 */
export function checkPolicyPatch(input: unknown): { value: Json; issues: PolicyIssue[] } {
  const issues: PolicyIssue[] = [];
  const r = walkObject(POLICY_SCHEMA, [], input, [], issues);
  return { value: r === FAIL ? {} : r, issues };
}

// ---- merging and comparing -------------------------------------------------------------------

/** Members given replace stored ones: objects member by member, lists and other values whole. */
export function mergePolicy(stored: Json, patch: Json): Json {
  const out: Json = { ...stored };
  for (const [k, v] of Object.entries(patch))
    out[k] = isObject(v) && isObject(stored[k]) ? mergePolicy(stored[k], v) : v;
  return out;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const k of Object.keys(v).sort()) {
    const m = v[k];
    // Spec doc 1, Import semantics 4: an empty list and an omitted list compare equal.
    if (m === undefined || m === null || (Array.isArray(m) && m.length === 0)) continue;
    const c = canonical(m);
    if (isObject(c) && Object.keys(c).length === 0) continue;
    out[k] = c;
  }
  return out;
}

/** Whether two policies say the same (member order, empty lists and empty sections aside). */
export const samePolicy = (a: Json, b: Json): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

// ---- rules across members --------------------------------------------------------------------

const section = (p: Json, name: string): Json => (isObject(p[name]) ? p[name] : {});
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

/** The rules that span members, on the merged policy (spec doc 1, Policy; Passkey policy). */
export function policyRuleIssues(p: Json, opts: PolicyRuleOptions): PolicyIssue[] {
  const out: PolicyIssue[] = [];
  const add = (path: PolicyPath, code: string, detail: string) => out.push({ path, code, detail });

  const login = section(p, 'login');
  if (!SIGN_IN_METHODS.some((m) => login[m] === true))
    add(['login'], 'no_sign_in_method', `at least one of ${SIGN_IN_METHODS.join(', ')} must be true`);
  const identifiers = strings(login.identifiers);
  if (login.sms_otp === true && !identifiers.includes('phone'))
    add(
      ['login', 'identifiers'],
      'phone_identifier_required',
      'SMS sign-in needs phone among the identifiers',
    );

  const registration = section(p, 'registration');
  if (registration.mode === 'domain_restricted' && strings(registration.allowed_domains).length === 0)
    add(
      ['registration', 'allowed_domains'],
      'required',
      'domain-restricted registration needs at least one allowed domain',
    );

  const mfa = section(p, 'mfa');
  const factors = strings(mfa.allowed_factors);
  if (mfa.requirement === 'required' && !factors.some((f) => f !== 'recovery_code'))
    add(['mfa', 'allowed_factors'], 'no_second_factor', 'required MFA needs totp, hotp or webauthn allowed');
  const hotp = section(mfa, 'hotp');
  if (typeof hotp.resync_window === 'number' && hotp.resync_window !== 0) {
    const lookAhead = typeof hotp.look_ahead === 'number' && hotp.look_ahead !== 0 ? hotp.look_ahead : 10;
    if (hotp.resync_window < lookAhead)
      add(
        ['mfa', 'hotp', 'resync_window'],
        'too_small',
        `0 or at least the effective look_ahead (${lookAhead})`,
      );
  }

  webauthnRules(section(p, 'webauthn'), opts, add);

  const profile = section(p, 'profile');
  const declared = new Set<string>([
    ...STANDARD_PROFILE_ATTRIBUTES,
    ...(Array.isArray(profile.attributes)
      ? profile.attributes.flatMap((a) => (isObject(a) && typeof a.name === 'string' ? [a.name] : []))
      : []),
  ]);
  const attributeNames = Array.isArray(profile.attributes)
    ? profile.attributes.map((a) => (isObject(a) ? a.name : undefined))
    : [];
  attributeNames.forEach((n, i) => {
    if (attributeNames.indexOf(n) !== i)
      add(['profile', 'attributes', i, 'name'], 'not_unique', 'another attribute has this name');
  });
  strings(profile.required_fields).forEach((f, i) => {
    if (!declared.has(f))
      add(['profile', 'required_fields', i], 'unknown_attribute', 'not a profile attribute of this realm');
  });

  const flow = section(p, 'authentication_flow');
  if (Array.isArray(flow.rules)) {
    flow.rules.forEach((r, i) => {
      // A challenge is answered through the provider or, with the alternative, an emailed code.
      if (
        isObject(r) &&
        r.outcome === 'challenge' &&
        !flow.challenge_provider &&
        flow.email_code_alternative !== true
      )
        add(
          ['authentication_flow', 'rules', i, 'outcome'],
          'challenge_provider_required',
          'set challenge_provider (or email_code_alternative) first',
        );
    });
  }

  const engine = p.policy_engine;
  if (isObject(engine) && typeof engine.name !== 'string')
    add(['policy_engine', 'name'], 'required', 'the engine name is required ("" for none)');

  const ui = section(p, 'interaction').login_ui_url;
  if (opts.production && typeof ui === 'string' && ui !== '' && !ui.startsWith('https:'))
    add(['interaction', 'login_ui_url'], 'https_required', 'in production the login UI is served over https');

  const cr = section(p, 'client_registration');
  if (cr.open === true && cr.enabled !== true)
    add(['client_registration', 'open'], 'requires_enabled', 'open registration needs enabled true');
  return out;
}

function webauthnRules(
  w: Json,
  opts: PolicyRuleOptions,
  add: (path: PolicyPath, code: string, detail: string) => void,
): void {
  const rpId = typeof w.rp_id === 'string' && w.rp_id !== '' ? w.rp_id : null;
  const origins = strings(w.origins);
  if (rpId !== null) {
    if (origins.length === 0)
      add(['webauthn', 'origins'], 'required', 'an explicit rp_id needs the origins passkeys are used from');
    origins.forEach((o, i) => {
      const host = hostOf(o);
      if (host !== null && host !== rpId && !host.endsWith(`.${rpId}`))
        add(['webauthn', 'origins', i], 'outside_rp_id', `the origin's host is not ${rpId} or below it`);
    });
  }
  const related = strings(w.related_origins);
  if (related.length > 0) {
    if (!opts.relatedOriginsEnabled)
      add(
        ['webauthn', 'related_origins'],
        'feature_disabled',
        'the operator has not enabled related origins',
      );
    if (rpId === null) add(['webauthn', 'rp_id'], 'required', 'related origins need an explicit rp_id');
    const domains = new Set([...origins, ...related].map(registrableDomain).filter((d) => d !== null));
    if (domains.size > 5)
      add(['webauthn', 'related_origins'], 'too_many', 'at most 5 registrable domains together with origins');
  }
  if (w.require_trusted_attestation === true && w.attestation !== 'direct' && w.attestation !== 'enterprise')
    add(
      ['webauthn', 'require_trusted_attestation'],
      'attestation_required',
      'needs attestation direct or enterprise',
    );
  if (w.enforce_credential_protection === true && !w.credential_protection)
    add(
      ['webauthn', 'enforce_credential_protection'],
      'credential_protection_required',
      'set credential_protection first',
    );
  if (strings(w.allowed_aaguids).length > 0 && strings(w.blocked_aaguids).length > 0)
    add(['webauthn', 'blocked_aaguids'], 'conflict', 'allowed_aaguids and blocked_aaguids are exclusive');
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).hostname;
  } catch {
    return null;
  }
}

/** The last two labels of the host: an approximation of the registrable domain, without a suffix list. */
function registrableDomain(origin: string): string | null {
  const host = hostOf(origin);
  return host === null ? null : host.split('.').slice(-2).join('.');
}

// ---- one change, planned -----------------------------------------------------------------------

export interface PolicyPlan {
  /** The policy that would be stored. */
  merged: Json;
  /** Whether it differs from the stored one. */
  changed: boolean;
  /** Sections whose content would change. */
  sections: string[];
  issues: PolicyIssue[];
}

/**
 * A patch over the stored policy: checked member by member, merged, checked as a whole. A null
 * patch resets to `defaults` (the policy of a new realm).
 */
export function planPolicy(
  stored: Json,
  patch: unknown,
  defaults: Json,
  opts: PolicyRuleOptions,
): PolicyPlan {
  const checked = patch === null ? { value: defaults, issues: [] } : checkPolicyPatch(patch);
  if (checked.issues.length > 0)
    return { merged: stored, changed: false, sections: [], issues: checked.issues };
  const merged = patch === null ? defaults : mergePolicy(stored, checked.value);
  const sections = [...new Set([...Object.keys(stored), ...Object.keys(merged)])]
    .filter((k) => !samePolicy({ s: stored[k] }, { s: merged[k] }))
    .sort();
  return { merged, changed: sections.length > 0, sections, issues: policyRuleIssues(merged, opts) };
}

/** The rule options the operator's configuration sets. */
export const policyRulesOf = (config: {
  environment: string;
  webauthn: { relatedOrigins: boolean };
}): PolicyRuleOptions => ({
  relatedOriginsEnabled: config.webauthn.relatedOrigins,
  production: config.environment === 'production',
});
