import { isRetryable } from './pg-errors.ts';

/** Runs a transaction attempt, and once more when PostgreSQL reports a serialization failure. */
export async function withRetry<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (e) {
    if (!isRetryable(e)) throw e;
    return attempt();
  }
}
