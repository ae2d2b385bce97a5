// Creates a pending transaction from validated start parameters, with its binding secret: the
// browser cookie value or the headless continuation token (returned once, stored as a digest).
import { recorder } from '../audit/index.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId, randomToken } from '../platform/ids.ts';
import type { RealmRow } from '../realms/index.ts';
import { CONTINUATION_PREFIX } from './binding.ts';
import type { SigninDeps } from './signin.deps.ts';
import { transactionInsert } from './signin.repo.ts';
import type { StartParams } from './start.ts';
import type { Factor, SigninTx, TxMode } from './transaction.ts';

export interface Created {
  tx: SigninTx;
  /** pa_tx cookie value (browser) or continuation token (headless). */
  secret: string;
}

/** A live SSO session the browser brought to the authorization endpoint. */
export interface SessionSeed {
  sessionId: string;
  userId: string;
  factors: Factor[];
}

export async function createTransaction(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  p: StartParams,
  mode: TxMode,
  correlationId: string,
  seed: SessionSeed | null = null,
): Promise<Created> {
  const now = app.clock.now();
  const secret = mode === 'headless' ? `${CONTINUATION_PREFIX}${randomToken(32)}` : randomToken(32);
  const tx: SigninTx = {
    realmId: realm.id,
    id: newId('atx', now.getTime()),
    mode,
    status: 'pending',
    intent: p.intent,
    clientId: p.client.client_id,
    redirectUri: p.redirectUri,
    responseMode: p.responseMode,
    scopes: p.scopes,
    resources: p.resources,
    state: p.state,
    nonce: p.nonce,
    codeChallenge: p.codeChallenge,
    prompt: p.prompt,
    maxAge: p.maxAge,
    acrValues: p.acrValues,
    loginHint: p.loginHint,
    uiLocales: p.uiLocales,
    userAgent: p.userAgent,
    organization: p.organization,
    organizationId: null,
    identifier: null,
    userId: seed?.userId ?? null,
    completedFactors: seed?.factors ?? [],
    failures: 0,
    error: null,
    rememberMe: false,
    transient: false,
    consentScopes: null,
    pendingTotpSealed: null,
    registrationDecoy: null,
    sessionId: seed?.sessionId ?? null,
    accountConfirmed: false,
    redirectTo: null,
    expiresAt: new Date(now.getTime() + app.config.tokens.transactionTtlMs),
    createdAt: now,
    updatedAt: now,
    completedAt: null,
  };
  const actor = { type: 'client', id: p.client.client_id } as const;
  // The transaction and its audit record in one statement (issue 37).
  await recorder(q, { realmId: realm.id, actor, correlationId, now }).auditAlong(
    'signin.transaction.started',
    {
      category: 'security',
      data: {
        transaction_id: tx.id,
        mode,
        intent: tx.intent,
        client_id: tx.clientId,
        ...(seed ? { session_id: seed.sessionId } : {}),
      },
    },
    transactionInsert(tx, digestToken(secret)),
  );
  return { tx, secret };
}
