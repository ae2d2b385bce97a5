// Authentication-flow rules (spec doc 1, policy member authentication_flow and evaluation order
// 4; docs/security.md, "Authentication-flow rules"): ordered rules, the first whose conditions all
// hold decides. Pure: the facts come in, the outcome goes out.
import { BlockList, isIP } from 'node:net';
import type { RealmPolicy } from '../realms/index.ts';

export type FlowOutcome =
  | 'allow'
  | 'deny'
  | 'require_mfa'
  | 'require_phishing_resistant'
  | 'challenge'
  | 'review';
const OUTCOMES: readonly FlowOutcome[] = [
  'allow',
  'deny',
  'require_mfa',
  'require_phishing_resistant',
  'challenge',
  'review',
];

export interface FlowConditions {
  client_ids?: string[];
  organization_ids?: string[];
  /** CIDR ranges (IPv4 or IPv6); the caller's address is in one of them. */
  networks?: string[];
  /** true: no remembered device of the account was presented; false: one was. */
  new_device?: boolean;
  account_age_max_days?: number;
  account_age_min_days?: number;
  /** Exact matches on is_guest, protected, created_via, email_domain. */
  user_attributes?: Record<string, string | boolean>;
}

export interface FlowRule {
  name?: string;
  conditions?: FlowConditions;
  outcome: FlowOutcome;
}

export interface FlowSubject {
  clientId: string;
  organization: string | null;
  ip: string | null;
  newDevice: boolean;
  accountCreatedAt: Date | null;
  attributes: Record<string, string | boolean | null>;
  now: Date;
}

const obj = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** The realm's rules as written; malformed entries are skipped (policy validation refuses them). */
export function flowRules(policy: RealmPolicy): FlowRule[] {
  const rules = obj(policy.document.authentication_flow)?.rules;
  if (!Array.isArray(rules)) return [];
  return rules.filter((r): r is FlowRule => OUTCOMES.includes(obj(r)?.outcome as FlowOutcome));
}

export function flowSetting(
  policy: RealmPolicy,
  member: 'challenge_provider' | 'email_code_alternative',
): unknown {
  return obj(policy.document.authentication_flow)?.[member];
}

function inNetworks(ip: string | null, ranges: string[]): boolean {
  if (!ip) return false;
  const addr = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const r of ranges) {
    const [net = '', bits] = r.split('/');
    const fam = isIP(net) === 6 ? 'ipv6' : isIP(net) === 4 ? 'ipv4' : null;
    if (!fam) continue;
    const prefix = bits === undefined ? (fam === 'ipv4' ? 32 : 128) : Number(bits);
    if (Number.isInteger(prefix)) list.addSubnet(net, prefix, fam);
  }
  return list.check(addr, family);
}

function holds(c: FlowConditions, s: FlowSubject): boolean {
  if (c.client_ids && !c.client_ids.includes(s.clientId)) return false;
  if (c.organization_ids && !(s.organization && c.organization_ids.includes(s.organization))) return false;
  if (c.networks && !inNetworks(s.ip, c.networks)) return false;
  if (c.new_device !== undefined && c.new_device !== s.newDevice) return false;
  const ageDays = s.accountCreatedAt ? (s.now.getTime() - s.accountCreatedAt.getTime()) / 86_400_000 : null;
  if (c.account_age_max_days !== undefined && (ageDays === null || ageDays > c.account_age_max_days))
    return false;
  if (c.account_age_min_days !== undefined && (ageDays === null || ageDays < c.account_age_min_days))
    return false;
  for (const [k, v] of Object.entries(c.user_attributes ?? {})) if (s.attributes[k] !== v) return false;
  return true;
}

/** The first matching rule's outcome; null when none matches (the sign-in goes on as usual). */
export function evaluateFlow(rules: readonly FlowRule[], s: FlowSubject): FlowOutcome | null {
  for (const r of rules) if (holds(r.conditions ?? {}, s)) return r.outcome;
  return null;
}
