// A minimum strength for every password a person chooses (registration, the reset and
// update_password step, the self-service change): realm policy `password.min_strength`, 0..4,
// default 2, scored by zxcvbn-ts with its common-password and word lists, which ship inside the
// package (no network). 0 turns the check off. Refusal is the 422 validation problem the other
// password rules use, with `too_weak` on the password field (docs/policy.md, docs/decisions.md).
//
// The estimator and its lists load on the first password set, never at start-up, and nothing on
// the sign-in path calls this module.
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import type { FieldError } from '../platform/http/problem.ts';
import { problem } from '../platform/http/problem.ts';
import { policyValue, type RealmPolicy } from '../realms/index.ts';

export const DEFAULT_MIN_STRENGTH = 2;

/** The realm's minimum score (0..4); 0 means any password of the minimum length. */
export function minStrength(policy: RealmPolicy): number {
  const v = policyValue(policy, 'password', 'min_strength');
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 4 ? v : DEFAULT_MIN_STRENGTH;
}

let estimator: Promise<{ factory: ZxcvbnFactory; common: Set<string> }> | null = null;

function loadEstimator() {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory }, common] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
    ]);
    const factory = new ZxcvbnFactory({
      dictionary: { ...common.dictionary },
      graphs: common.adjacencyGraphs,
    });
    return { factory, common: new Set(common.dictionary['passwords-common']) };
  })();
  return estimator;
}

/** The zxcvbn score of a password (0..4); `context` (email, username) counts against it. */
export async function strengthScore(password: string, context: string[] = []): Promise<number> {
  const { factory, common } = await loadEstimator();
  // A password found as a whole in the shipped common-password list is the weakest there is.
  if (common.has(password.toLowerCase())) return 0;
  return factory.check(
    password,
    context.filter((c) => c !== ''),
  ).score;
}

/** The field error for a password below the realm's minimum strength, or null. */
export async function weakPasswordError(
  policy: RealmPolicy,
  field: string,
  password: string,
  context: string[] = [],
): Promise<FieldError | null> {
  const min = minStrength(policy);
  if (min === 0) return null;
  return (await strengthScore(password, context)) < min ? { field, code: 'too_weak' } : null;
}

/** Throws the validation problem when the password is below the realm's minimum strength. */
export async function refuseWeakPassword(
  policy: RealmPolicy,
  field: string,
  password: string,
  context: string[] = [],
): Promise<void> {
  const error = await weakPasswordError(policy, field, password, context);
  if (error) throw problem.validation([error]);
}
