// When an audit event may be pruned (spec doc 2, Data lifecycle 1; docs/audit.md, Retention).
// Pure rules; the worker task (ops/audit-retention.task.ts) gathers the facts.
import { parseDuration } from '../platform/config/duration.ts';
import type { RetentionEventRow } from './audit-retention.repo.ts';
import type { LegalHoldRow } from './legal-holds.repo.ts';

const DAY_MS = 24 * 3600 * 1000;

export interface RetentionSettings {
  /** privacy.audit_retention */
  defaultMs: number;
  /** privacy.audit_retention_by_category: category -> retention */
  byCategoryMs: Readonly<Record<string, number>>;
}

/**
 * Reads privacy.audit_retention_by_category: comma-separated `category=duration` pairs, e.g.
 * `security=730d,data_access=90d`. Throws on anything else so a typo never shortens retention.
 */
export function parseRetentionByCategory(text: string | null): Record<string, number> {
  const out: Record<string, number> = {};
  if (!text || text.trim() === '') return out;
  for (const pair of text.split(',')) {
    const m = /^\s*([a-z_]{1,40})\s*=\s*(\S+)\s*$/.exec(pair);
    if (!m) throw new Error(`privacy.audit_retention_by_category: "${pair.trim()}" is not category=duration`);
    const ms = parseDuration(m[2] as string);
    if (ms < DAY_MS) throw new Error(`privacy.audit_retention_by_category: ${m[1]} is shorter than 1d`);
    out[m[1] as string] = ms;
  }
  return out;
}

/**
 * A realm's audit.retention_days or an organization's audit_retention_days as an extension in
 * milliseconds: 0 (or absent) extends nothing; other values count at least 30 and at most 3650 days.
 */
export function extensionMs(days: unknown): number {
  if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) return 0;
  return Math.min(3650, Math.max(30, Math.floor(days))) * DAY_MS;
}

export const shortestRetentionMs = (s: RetentionSettings): number =>
  Math.min(s.defaultMs, ...Object.values(s.byCategoryMs));

export function holdCovers(h: LegalHoldRow, e: RetentionEventRow): boolean {
  if (e.realm_id === null || h.realm_id !== e.realm_id || h.released_at !== null) return false;
  if (h.organization_id !== null && h.organization_id !== e.org_id) return false;
  if (h.subject_id !== null && ![e.subject_id, e.actor_id, e.target_id].includes(h.subject_id)) return false;
  return true;
}

export interface EventRetentionFacts {
  settings: RetentionSettings;
  realmExtensionMs: number;
  orgExtensionMs: number;
  holds: readonly LegalHoldRow[];
}

/** Every applicable retention passed, not emergency, not held. */
export function isPrunable(e: RetentionEventRow, f: EventRetentionFacts, now: Date): boolean {
  if (e.category === 'emergency') return false;
  const base = f.settings.byCategoryMs[e.category] ?? f.settings.defaultMs;
  // Longer realm or organization retention only extends, never shortens.
  const keepMs = Math.max(base, f.realmExtensionMs, f.orgExtensionMs);
  if (new Date(e.occurred_at).getTime() + keepMs > now.getTime()) return false;
  return !f.holds.some((h) => holdCovers(h, e));
}
