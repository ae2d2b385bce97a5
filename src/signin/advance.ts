// Runs one step of a sign-in transaction (docs/signin.md, Calling steps): lock, check the binding and
// expiry, check the step is offered, run it, evaluate what comes next, complete when only
// completion remains, persist with audit and events, and return the full state. One database
// transaction per call; expensive proof checks run before it.
import { setTimeout as sleep } from 'node:timers/promises';
import { recorder } from '../audit/index.ts';
import type { ClientRow } from '../clients/index.ts';
import { findClient } from '../clients/index.ts';
import { findConnection } from '../identity-providers/index.ts';
import { adminAudience } from '../kernel/audiences.ts';
import { hasNul } from '../kernel/text.ts';
import { waitUntil } from '../platform/clock.ts';
import type { Companion } from '../platform/db/companions.ts';
import type { Tx } from '../platform/db/db.ts';
import { decodeBody } from '../platform/http/decode.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { currentPolicy, type RealmPolicy } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { isSigninOrigin } from './allowed-origin.ts';
import { authenticateCall, type CallCredentials } from './binding.ts';
import { completeTransaction, errorRedirect } from './complete.ts';
import { denyDevice } from './device-decision.ts';
import { loadFacts } from './facts.ts';
import { linkAfterProof } from './federation-links.ts';
import { noticeOf } from './federation-rules.ts';
import { noteCallerNetwork } from './flow-facts.ts';
import { markReviewed } from './flow-state.repo.ts';
import { evaluate } from './next-actions.ts';
import type { Evaluation, Facts } from './next-actions.types.ts';
import { withOrganization } from './organization-rules.ts';
import { notePresentedToken, rememberDeviceDays } from './remembered-device.ts';
import { notifySignedIn } from './sign-in-hooks.ts';
import { noticeNewSignIn } from './sign-in-notice.ts';
import type { SigninDeps } from './signin.deps.ts';
import { type StoredTx, saveTransaction } from './signin.repo.ts';
import { type AttemptRefund, enforceSigninBudgets, networkOf } from './signin-budgets.ts';
import { logStepRefused, logStepResult, type StepLogContext, type StepResult } from './signin-log.ts';
import { presentState, shownUser } from './state.ts';
import { lockStep, snapshotStep } from './step-reads.ts';
import { type AnyStep, type OneTime, type PrepareKnown, stepActor } from './steps/step.ts';
import type { SigninTx } from './transaction.ts';
import { ensurePending, expire, fail, isExpired } from './transitions.ts';

export interface StepResponse {
  body: Record<string, unknown>;
  /** Browser completion: the new pa_sid value and its lifetime (null: browser-session cookie). */
  sessionCookie?: { value: string; maxAgeSeconds: number | null };
  /** The transaction ended: its pa_tx cookie is cleared. */
  clearTxCookie: boolean;
  /** Browser: a device just remembered gets the pa_rd cookie. */
  deviceCookie?: { value: string; maxAgeSeconds: number };
  /** Browser: federation/start binds the upstream's callback to this browser (pa_fed). */
  federationCookie?: string;
}

type Ran = StepResponse & { result: StepResult };

export async function requireRealm(app: SigninDeps, realmName: string): Promise<RealmRow> {
  const realm = await findRequestedRealm(app, realmName);
  if (!realm) throw problem.notFound('no such realm');
  return realm;
}

export function requireTxId(txId: string): void {
  if (hasNul(txId)) throw problem.notFound('no such transaction');
}

export const originCheck = (app: SigninDeps, q: Tx | SigninDeps['db'], realm: RealmRow) => (origin: string) =>
  isSigninOrigin(q, app.config.server.publicOrigin, realm.id, origin);

interface Loaded {
  client: ClientRow;
  policy: RealmPolicy;
  facts: Facts;
  evaluation: Evaluation;
  /** The request presents a client certificate (the certificate step may be offered). */
  certificatePresented: boolean;
}

/** What a step's evaluation keeps from the one before it. */
type Known = { client: ClientRow; policy: RealmPolicy; certificatePresented?: boolean };

/**
 * Client, policy and the facts for a transaction. A step changes neither the client nor the realm
 * policy, so re-evaluating after it passes them in and only the account facts are read again.
 */
export async function loadAll(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  t: SigninTx,
  known?: Known,
  certificatePresented = known?.certificatePresented ?? false,
): Promise<Loaded> {
  const client = known?.client ?? (await findClient(q, realm.id, t.clientId));
  if (!client) throw problem.notFound('the transaction client no longer exists');
  const policy = known?.policy ?? (await currentPolicy(q, realm.id));
  const facts = await loadFacts(q, t, {
    config: app.config,
    client,
    policy,
    adminAudience: adminAudience(app.config.server.publicOrigin, realm.name),
    now: app.clock.now(),
    certificatePresented,
  });
  return { client, policy, facts, evaluation: evaluate(t, facts), certificatePresented };
}

function offered(step: AnyStep, evaluation: Evaluation): boolean {
  if (step.action === null) return true;
  return evaluation.kind === 'actions' && evaluation.actions.some((a) => a.type === step.action);
}

export async function runStep(
  app: SigninDeps,
  realmName: string,
  txId: string,
  creds: CallCredentials,
  step: AnyStep,
  rawBody: unknown,
  correlationId: string,
): Promise<StepResponse> {
  const startedAt = Date.now();
  const logged: StepLogContext = {
    log: app.log,
    requestId: correlationId,
    realm: realmName,
    transactionId: txId,
    step: step.path,
  };
  let refund: AttemptRefund | null = null;
  try {
    const { result, ...response } = await runStepUnpadded(
      app,
      realmName,
      txId,
      creds,
      step,
      rawBody,
      correlationId,
      (r) => {
        refund = r;
      },
    );
    if (!result.proofFailed) await (refund as AttemptRefund | null)?.run();
    logStepResult(logged, result);
    return response;
  } catch (e) {
    await (refund as AttemptRefund | null)?.run();
    logStepRefused(logged, e);
    throw e;
  } finally {
    // Known and unknown accounts, right and wrong passwords: all answer after the same floor.
    if (step.padded) await sleep(app.config.security.minAuthResponseMs - (Date.now() - startedAt));
  }
}

async function runStepUnpadded(
  app: SigninDeps,
  realmName: string,
  txId: string,
  creds: CallCredentials,
  step: AnyStep,
  rawBody: unknown,
  correlationId: string,
  onBudgetSpent: (refund: AttemptRefund) => void,
): Promise<Ran> {
  const realm = await requireRealm(app, realmName);
  requireTxId(txId);
  const body = decodeBody(step.decode, rawBody ?? {});
  // Budgets and proofs run before the locked transaction, by a caller bound to the transaction:
  // one unlocked read serves both, and the lock below checks the binding again.
  let snapshot: StoredTx | null = null;
  let known: PrepareKnown = {};
  if (step.spendsBudgets || step.prepare) {
    const read = await snapshotStep(app.db, realm.id, txId, step.readsPasswordVerifier === true);
    if (!read) throw problem.notFound('no such transaction');
    snapshot = read.stored;
    if (read.passwordVerifier !== undefined) known = { passwordVerifier: read.passwordVerifier };
    await authenticateCall(snapshot, creds, originCheck(app, app.db, realm));
  }
  let spent: AttemptRefund | null = null;
  if (snapshot && step.spendsBudgets) {
    // Budgets are spent before any proof or send.
    const typed = (body as { identifier?: unknown }).identifier;
    spent = await enforceSigninBudgets(
      app,
      snapshot.tx,
      networkOf(creds.clientIp),
      typeof typed === 'string' ? typed : null,
      step.accountBudget ?? 'proof',
    );
    onBudgetSpent(spent);
  }
  let prepared: unknown;
  if (snapshot && step.prepare) {
    // Authenticated above before spending CPU on a proof.
    ensurePending(snapshot.tx);
    prepared = await step.prepare(app, snapshot.tx, body, correlationId, known);
  }

  const result = await app.db.tx(async (q) => {
    const locked = await lockStep(q, realm.id, txId);
    if (!locked) throw problem.notFound('no such transaction');
    const stored = locked.stored;
    await authenticateCall(stored, creds, originCheck(app, q, realm));
    const now = app.clock.now();
    if (isExpired(stored.tx, now)) {
      await saveTransaction(q, expire(stored.tx), now);
      return { expired: true as const };
    }
    ensurePending(stored.tx);
    const certificate = creds.clientCertificate ?? null;
    if (!locked.client) throw problem.notFound('the transaction client no longer exists');
    const loaded = await loadAll(
      app,
      q,
      realm,
      stored.tx,
      { client: locked.client, policy: locked.policy },
      certificate !== null,
    );
    // Flow rules may look at the caller's network: keep it, then evaluate again.
    const before = (await noteCallerNetwork(q, stored.tx, loaded.policy, creds.clientIp))
      ? await loadAll(app, q, realm, stored.tx, loaded)
      : loaded;
    if (before.client.state !== 'active') {
      // A client disabled while its sign-in was in flight gets no code: a policy denial.
      const denied = await settle(
        app,
        q,
        realm,
        fail(stored.tx, 'access_denied'),
        now,
        correlationId,
        before,
        false,
        spent?.part,
      );
      return {
        expired: false as const,
        ...denied,
        oneTime: undefined,
        webauthn: undefined,
        externalRedirect: undefined,
        federationCookie: undefined,
        policy: before.policy,
        proofFailed: false,
      };
    }
    if (!offered(step, before.evaluation)) {
      throw new Problem(409, 'conflict', `the ${step.path} step is not offered now`);
    }
    const outcome = await step.run(
      q,
      stored.tx,
      body,
      { app, realm, ...before, now, correlationId, clientCertificate: certificate },
      prepared,
    );
    await notePresentedToken(q, outcome.tx, creds.rememberedDevice ?? null, before.policy, now);
    const proved = await linkAfterProof(
      q,
      { realmId: realm.id, actor: stepActor(outcome.tx.userId), correlationId, now },
      stored.tx,
      outcome.tx,
      (id) => findConnection(q, realm.id, id),
      before.facts.federation?.recorded,
    );
    // The facts read before a step that changes none of them serve the evaluation after it.
    const factsKept =
      step.keepsFacts === true &&
      !creds.rememberedDevice &&
      before.facts.federation?.recorded === false &&
      proved.userId === stored.tx.userId &&
      proved.identifier === stored.tx.identifier;
    const proofFailed = outcome.tx.failures > stored.tx.failures;
    // The account's attempt goes back with the transaction's write, unless the proof failed.
    const along = proofFailed ? null : spent?.part;
    return {
      expired: false as const,
      ...(await settle(app, q, realm, proved, now, correlationId, before, factsKept, along)),
      oneTime: outcome.oneTime,
      webauthn: outcome.webauthn,
      externalRedirect: outcome.externalRedirect,
      federationCookie: outcome.federationCookie,
      policy: before.policy,
      proofFailed,
    };
  });
  // Committed: an attempt given back in the transaction's write is not given back again.
  if (spent && !result.expired && !result.proofFailed) spent.given = true;
  if (result.expired)
    throw new Problem(409, 'conflict', 'the transaction is expired', { transaction_status: 'expired' });
  await notifySignedIn(app, result.tx, realm.hook_kinds);
  // Completed right after an account-wide revocation in this second: the code's tokens would be
  // revoked with it, so the answer that hands the code out waits for the next second (complete.ts).
  if (result.tokensLiveFrom) await waitUntil(app.clock, result.tokensLiveFrom);
  // A browser never sees the device token in a body: it travels as the HttpOnly pa_rd cookie.
  let deviceCookie: StepResponse['deviceCookie'];
  let oneTime = result.oneTime;
  if (oneTime?.remembered_device_token && result.tx.mode === 'browser') {
    const { remembered_device_token: value, ...rest } = oneTime;
    deviceCookie = { value, maxAgeSeconds: rememberDeviceDays(result.policy) * 86_400 };
    oneTime = rest;
  }
  return {
    ...(deviceCookie ? { deviceCookie } : {}),
    ...(result.federationCookie && result.tx.status === 'pending'
      ? { federationCookie: result.federationCookie }
      : {}),
    body: presentState({
      tx: result.tx,
      clientName: result.clientName,
      evaluation: result.evaluation,
      user: result.user,
      notice: result.notice,
      ...(oneTime ? { oneTime } : {}),
      ...(result.webauthn ? { webauthn: result.webauthn } : {}),
      ...(result.externalRedirect ? { externalRedirect: result.externalRedirect } : {}),
    }),
    ...(result.sessionCookie ? { sessionCookie: result.sessionCookie } : {}),
    clearTxCookie: result.tx.status !== 'pending' && result.tx.mode === 'browser',
    result: {
      status: result.tx.status,
      error: result.tx.error,
      clientId: result.tx.clientId,
      factors: result.tx.completedFactors,
      proofFailed: result.proofFailed,
    },
  };
}

/** After a step: complete, record a blocking reason, or give a terminal redirect; then persist. */
export async function settle(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  t: SigninTx,
  now: Date,
  correlationId: string,
  known: Known & { facts?: Facts },
  factsKept = false,
  along?: Companion | null,
) {
  let tx = t;
  let evaluation: Evaluation | null = null;
  let sessionCookie: StepResponse['sessionCookie'];
  let tokensLiveFrom: Date | undefined;
  const after =
    factsKept && known.facts
      ? {
          client: known.client,
          policy: known.policy,
          facts: known.facts,
          evaluation: evaluate(tx, known.facts),
          certificatePresented: known.certificatePresented ?? false,
        }
      : await loadAll(app, q, realm, tx, known);
  if (after.facts.flow?.outcome === 'review' && (await markReviewed(q, realm.id, tx.id))) {
    await recorder(q, { realmId: realm.id, actor: stepActor(tx.userId), correlationId, now }).audit(
      'signin.authentication_review',
      {
        category: 'security',
        signal: 'authentication_review',
        ...(tx.userId ? { subject: { type: 'user', id: tx.userId } } : {}),
        data: { transaction_id: tx.id, client_id: tx.clientId },
      },
    );
  }
  if (tx.status === 'pending') {
    evaluation = after.evaluation;
    if (evaluation.kind === 'complete') {
      const done = await completeTransaction(
        app,
        q,
        realm,
        after.policy,
        withOrganization(tx, after.facts),
        after.facts.user?.state ?? 'active',
        now,
        correlationId,
      );
      // A new session (not a reused SSO one) may be a sign-in from a new device.
      if (!tx.sessionId)
        await noticeNewSignIn(app, q, realm, after.policy, after.facts, done.tx, done.session.id, now);
      tx = done.tx;
      tokensLiveFrom = done.tokensLiveFrom;
      if (done.sessionCookie) {
        const maxAge = tx.transient
          ? null
          : Math.floor((done.session.absolute_expires_at.getTime() - now.getTime()) / 1000);
        sessionCookie = { value: done.sessionCookie, maxAgeSeconds: maxAge };
      }
    }
  } else if (tx.intent === 'device') {
    // No redirect: a refusal by the person denies the device (device-decision.ts).
    await denyDevice(q, realm, tx, now, correlationId);
  } else if (!tx.redirectTo) {
    tx = { ...tx, redirectTo: await errorRedirect(app, q, realm, tx, now) };
  }
  await saveTransaction(q, tx, now, along);
  return {
    tx,
    evaluation,
    sessionCookie,
    tokensLiveFrom,
    clientName: after.client.name,
    user: shownUser(tx, after.facts.user),
    notice: noticeOf(after.facts),
  };
}

export type { OneTime };
