// Analysis of a federation transfer's entries (spec doc 1, "Federation transfer": entry outcomes;
// docs/federation.md, Federation transfers). Pure: it reads the entries and the links of both
// connections and says, per entry, what applying would do. Links are found by issuer and subject
// only, never by email.
import { isMultiTenant, TENANT_PLACEHOLDER } from './connection.ts';

export const OUTCOMES = [
  'ready',
  'already_linked',
  'missing_source',
  'ambiguous_source',
  'duplicate_source',
  'duplicate_target',
  'collision_target',
  'collision_user',
  'target_tenant_required',
  'applied',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface EntryInput {
  seq: number;
  source_subject: string;
  source_issuer: string | null;
  target_subject: string;
  target_tenant: string | null;
}

export interface LinkFacts {
  id: string;
  user_id: string;
  upstream_issuer: string;
  upstream_subject: string;
}

export interface Analysed {
  seq: number;
  outcome: Outcome;
  linkId: string | null;
  targetIssuer: string | null;
  /** The account of the source link, kept in memory only (apply reads it; entries never store it). */
  userId: string | null;
}

const key = (issuer: string, subject: string) => `${issuer}\n${subject}`;

function group<T>(items: readonly T[], by: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = by(i);
    const list = m.get(k);
    if (list) list.push(i);
    else m.set(k, [i]);
  }
  return m;
}

/**
 * The outcome of every entry. Checks run in a fixed order, so an entry shows its first problem:
 * the source link, the target tenant, entries competing for one link or one target identity, then
 * the links already at the target connection.
 */
export function analyseEntries(
  transfer: { targetIssuer: string; targetTenant: string | null },
  entries: readonly EntryInput[],
  sourceLinks: readonly LinkFacts[],
  targetLinks: readonly LinkFacts[],
): Analysed[] {
  const bySubject = group(sourceLinks, (l) => l.upstream_subject);
  const targetByKey = new Map(targetLinks.map((l) => [key(l.upstream_issuer, l.upstream_subject), l]));
  const targetUsers = group(targetLinks, (l) => l.user_id);
  const templated = isMultiTenant(transfer.targetIssuer);

  const first: Analysed[] = entries.map((e) => {
    const candidates = (bySubject.get(e.source_subject) ?? []).filter(
      (l) => e.source_issuer === null || l.upstream_issuer === e.source_issuer,
    );
    const base = { seq: e.seq, linkId: null, targetIssuer: null, userId: null };
    if (candidates.length === 0) return { ...base, outcome: 'missing_source' };
    if (candidates.length > 1) return { ...base, outcome: 'ambiguous_source' };
    const link = candidates[0] as LinkFacts;
    const found = { ...base, linkId: link.id, userId: link.user_id };
    const tenant = e.target_tenant ?? transfer.targetTenant;
    if (templated && tenant === null) return { ...found, outcome: 'target_tenant_required' };
    const targetIssuer = templated
      ? transfer.targetIssuer.replaceAll(TENANT_PLACEHOLDER, tenant as string)
      : transfer.targetIssuer;
    return { ...found, targetIssuer, outcome: 'ready' };
  });

  const subjectOf = new Map(entries.map((e) => [e.seq, e.target_subject]));
  const resolved = first.filter((a) => a.outcome === 'ready');
  const perLink = group(resolved, (a) => a.linkId as string);
  const perTarget = group(resolved, (a) => key(a.targetIssuer as string, subjectOf.get(a.seq) as string));

  return first.map((a) => {
    if (a.outcome !== 'ready') return a;
    if ((perLink.get(a.linkId as string)?.length ?? 0) > 1) return { ...a, outcome: 'duplicate_source' };
    const targetKey = key(a.targetIssuer as string, subjectOf.get(a.seq) as string);
    if ((perTarget.get(targetKey)?.length ?? 0) > 1) return { ...a, outcome: 'duplicate_target' };
    const existing = targetByKey.get(targetKey);
    if (existing)
      return { ...a, outcome: existing.user_id === a.userId ? 'already_linked' : 'collision_target' };
    // The account holds another identity at the target connection: moving would give it two.
    if (targetUsers.has(a.userId as string)) return { ...a, outcome: 'collision_user' };
    return a;
  });
}

/** Counts per outcome, every outcome present, and the total. */
export function summarise(outcomes: Iterable<Outcome>): Record<Outcome | 'total', number> {
  const s = Object.fromEntries([...OUTCOMES.map((o) => [o, 0]), ['total', 0]]) as Record<
    Outcome | 'total',
    number
  >;
  for (const o of outcomes) {
    s[o] += 1;
    s.total += 1;
  }
  return s;
}

/** What applying would change: links to move or redundant source links to drop. */
export const applicable = (s: Record<Outcome | 'total', number>) => s.ready + s.already_linked > 0;
