// What a bounded-state verifier knows of revocations, built from the session-event stream (document
// 1, realm API table: GET /session-events), and the judgement of a verified token against it.
// Entries older than any live token could be are dropped: access tokens live at most 60 minutes.
import type { AccessClaims } from './offline.ts';

export interface SessionEvent {
  id: string;
  type: string;
  occurred_at: string;
  [member: string]: unknown;
}

/** Longest access-token lifetime (document 1, Limits: tokens.max_access_token_ttl 60 min) plus tolerance. */
const FORGET_AFTER_MS = 61 * 60 * 1000;

const seconds = (iso: unknown): number => Math.floor(Date.parse(String(iso)) / 1000);

export class RevocationState {
  private readonly sessions = new Map<string, number>();
  private readonly tokens = new Map<string, number>();
  private readonly keys = new Set<string>();
  /** User id -> tokens issued at or before this second are dead. */
  private readonly users = new Map<string, number>();
  /** `user client` -> tokens issued at or before this second are dead. */
  private readonly grants = new Map<string, number>();

  apply(e: SessionEvent): void {
    const at = seconds(e.occurred_at);
    switch (e.type) {
      case 'session_ended':
        this.sessions.set(String(e.session_id), at);
        break;
      case 'token_revoked':
        this.tokens.set(String(e.jti), at);
        break;
      case 'key_compromised':
        this.keys.add(String(e.kid));
        break;
      case 'account_revoked': {
        const before = seconds(e.revoked_before);
        const user = String(e.user_id);
        this.users.set(user, Math.max(this.users.get(user) ?? 0, before));
        break;
      }
      case 'grant_revoked':
        this.grants.set(`${String(e.user_id)} ${String(e.client_id)}`, at);
        break;
      default:
        // refresh_family_revoked ends refresh, not the access tokens already issued; unknown types
        // of a newer server are skipped.
        break;
    }
  }

  /** Why the token is revoked, or null when nothing known revokes it. */
  revokedBecause(claims: AccessClaims, kid: string | undefined): string | null {
    if (kid && this.keys.has(kid)) return 'its signing key was compromised';
    if (this.tokens.has(claims.jti)) return 'the token was revoked';
    if (claims.sid && this.sessions.has(claims.sid)) return 'its session ended';
    const user = this.users.get(claims.sub);
    if (user !== undefined && claims.iat <= user) return 'the account was revoked';
    const client = claims.grant_client_id ?? claims.client_id;
    const grant = client ? this.grants.get(`${claims.sub} ${client}`) : undefined;
    if (grant !== undefined && claims.iat <= grant) return 'its grant was revoked';
    return null;
  }

  /** Drops what no live token can be affected by any more (compromised keys are kept). */
  forget(nowMs: number): void {
    const cut = Math.floor((nowMs - FORGET_AFTER_MS) / 1000);
    for (const m of [this.sessions, this.tokens, this.users, this.grants])
      for (const [k, at] of m) if (at < cut) m.delete(k);
  }

  clear(): void {
    for (const m of [this.sessions, this.tokens, this.users, this.grants]) m.clear();
    this.keys.clear();
  }
}
