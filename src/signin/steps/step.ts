// The contract every sign-in step module fulfils (one module per step, steps/index.ts). `prepare` does expensive
// work (password hashing) before the row lock is taken; `run` applies the step inside the
// transaction. A failed proof is a result, not an exception, so its spent budget commits.

import type { Actor } from '../../audit/audit.types.ts';
import { type Recorder, recorder } from '../../audit/index.ts';
import type { ClientRow } from '../../clients/index.ts';
import type { Tx } from '../../platform/db/db.ts';
import type { PresentedCertificate } from '../../platform/http/client-certificate.ts';
import type { Decoder } from '../../platform/http/decode.ts';
import type { RealmPolicy, RealmRow } from '../../realms/index.ts';
import type { PasswordVerifier } from '../../users/index.ts';
import type { ActionType, Evaluation, Facts } from '../next-actions.types.ts';
import type { SigninDeps } from '../signin.deps.ts';
import type { SigninTx } from '../transaction.ts';

export interface OneTime {
  totp?: { secret: string; otpauth_uri: string };
  recovery_codes?: string[];
  /** Headless clients only; a browser gets it as the pa_rd cookie. */
  remembered_device_token?: string;
}

export interface StepContext {
  app: SigninDeps;
  realm: RealmRow;
  client: ClientRow;
  policy: RealmPolicy;
  facts: Facts;
  evaluation: Evaluation;
  now: Date;
  correlationId: string;
  /** The request's client certificate (mutual-TLS listener or trusted proxy); null without one. */
  clientCertificate?: PresentedCertificate | null;
}

export interface StepOutcome {
  tx: SigninTx;
  oneTime?: OneTime;
  /** Passkey ceremony options for the browser (state.webauthn). */
  webauthn?: Record<string, unknown>;
  /** federation/start: where the browser goes next (state.external_redirect). */
  externalRedirect?: string;
  /** federation/start in browser mode: the pa_fed value binding the callback to this browser. */
  federationCookie?: string;
}

/** What the read before `prepare` already holds. */
export interface PrepareKnown {
  /** Present when the step reads the password verifier: the transaction account's (null: none). */
  passwordVerifier?: PasswordVerifier | null;
}

export interface Step<B, P = undefined> {
  /** Path segment(s) after /auth/transactions/{id}/ */
  readonly path: string;
  /**
   * Checks a secret (a password, a code, a link, a passkey, a challenge answer) or sends one: the
   * step spends the abuse budgets before anything else (signin-budgets.ts). Every step says so.
   */
  readonly spendsBudgets: boolean;
  /**
   * `mailbox` for the proofs of the account's mailbox (emailed codes, magic links, reset codes):
   * they spend an account budget of their own (signin-budgets.ts). Others spend the proof budget.
   */
  readonly accountBudget?: 'mailbox';
  /** The next action this step answers; null for steps allowed at any time while pending. */
  readonly action: ActionType | null;
  readonly decode: Decoder<B>;
  /** Pad the response to security.min_auth_response (known and unknown accounts alike). */
  readonly padded?: boolean;
  /** `prepare` uses the account's password verifier: the unlocked read before it brings it along. */
  readonly readsPasswordVerifier?: boolean;
  /**
   * `run` writes nothing the account facts read (next-actions.types.ts Facts) and keeps the
   * transaction's account and identifier: the facts read before it serve the evaluation after it.
   */
  readonly keepsFacts?: boolean;
  prepare?(app: SigninDeps, t: SigninTx, body: B, correlationId: string, known: PrepareKnown): Promise<P>;
  run(q: Tx, t: SigninTx, body: B, ctx: StepContext, prepared: P): Promise<StepOutcome>;
}

// Steps differ in body and preparation types; the registry only needs to call them uniformly.
// biome-ignore lint/suspicious/noExplicitAny: heterogeneous registry of typed steps
export type AnyStep = Step<any, any>;

/** The recorder of a step's evidence: `actor` acting in the realm, at the step's request and time. */
export const stepRecorder = (q: Tx, realmId: string, ctx: StepContext, actor: Actor): Recorder =>
  recorder(q, { realmId, actor, correlationId: ctx.correlationId, now: ctx.now });

/** The transaction's user once known; the system before. */
export const stepActor = (userId: string | null): Actor =>
  userId ? { type: 'user', id: userId } : { type: 'system', id: null };
