// The state object every transaction call returns (spec doc 1, "Sign-in transaction state").
import type { Evaluation, UserFacts } from './next-actions.types.ts';
import type { OneTime } from './steps/step.ts';
import type { SigninTx } from './transaction.ts';

export interface PresentInput {
  tx: SigninTx;
  clientName: string;
  evaluation: Evaluation | null;
  user: { displayName: string | null; email: string | null } | null;
  oneTime?: OneTime;
  webauthn?: Record<string, unknown>;
  csrfToken?: string;
  /** A non-terminal condition: upstream_unavailable, account_conflict. */
  notice?: string | null;
  /** The upstream URL federation/start sends the browser to. */
  externalRedirect?: string;
}

/**
 * The account the state names: the transaction's, or for a registration whose address was taken
 * the account that was not created, shown as a new one would be (docs/registration.md).
 */
export function shownUser(tx: SigninTx, user: UserFacts | null): PresentInput['user'] {
  if (user) return { displayName: user.displayName, email: user.email };
  const decoy = tx.registrationDecoy;
  return decoy ? { displayName: decoy.displayName, email: tx.identifier } : null;
}

/** `alice@example.com` -> `a***@example.com`: enough to recognise, too little to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

export function presentState(p: PresentInput): Record<string, unknown> {
  const { tx } = p;
  const pending = tx.status === 'pending';
  const actions = pending && p.evaluation?.kind === 'actions' ? p.evaluation.actions : [];
  const blocked = pending && p.evaluation?.kind === 'blocked' ? p.evaluation.reason : null;
  const primaryDone = tx.completedFactors.length > 0;
  const body: Record<string, unknown> = {
    id: tx.id,
    status: tx.status,
    expires_at: tx.expiresAt.toISOString(),
    intent: tx.intent,
    client: { client_id: tx.clientId, name: p.clientName },
    next_actions: actions,
    completed_factors: tx.completedFactors,
  };
  if (primaryDone && p.user) {
    body.user = {
      display_name: p.user.displayName,
      ...(p.user.email ? { email_hint: maskEmail(p.user.email) } : {}),
    };
  }
  if (tx.redirectTo && !pending) body.redirect_to = tx.redirectTo;
  const error = blocked ?? (pending ? null : tx.error);
  if (error) body.error = error;
  if (p.oneTime && Object.keys(p.oneTime).length > 0) body.one_time = p.oneTime;
  if (p.webauthn && pending) body.webauthn = p.webauthn;
  if (p.notice && pending) body.notice = p.notice;
  if (p.externalRedirect && pending) body.external_redirect = p.externalRedirect;
  if (p.csrfToken) body.csrf_token = p.csrfToken;
  if (tx.uiLocales) body.locale = tx.uiLocales;
  return body;
}
