// The administration API calls of identity-cli migrate-from (spec doc 2, "Migration adapters"
// rules 2 to 4): the realm's organizations and roles, batches posted with their own
// Idempotency-Key and retried on network errors and 5xx (three times, a second apart, same key;
// never on 4xx), the job polled every second, and the reconciliation.
import { setTimeout as sleep } from 'node:timers/promises';
import { adminRequest, problemSummary, responseBody, type StoredSignIn } from './admin-api.ts';
import { CliError, SignInEnded } from './cli-error.ts';

type Body = Record<string, unknown>;
export const RETRIES = 3;
export const RETRY_DELAY_MS = 1000;
export const POLL_MS = 1000;
const FINAL = new Set(['succeeded', 'failed', 'dead_letter', 'cancelled']);

export class MigrationApi {
  readonly #signIn: StoredSignIn;
  constructor(signIn: StoredSignIn) {
    this.#signIn = signIn;
  }

  /** One call; network errors and 5xx tried again with the same request, 4xx answered at once. */
  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    let last = '';
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      if (attempt > 0) await sleep(RETRY_DELAY_MS);
      try {
        const res = await adminRequest(this.#signIn, {
          method,
          path,
          headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          body: body === undefined ? null : JSON.stringify(body),
        });
        const answer = await responseBody(res.response);
        if (res.status < 500) return { status: res.status, body: (answer ?? {}) as Body };
        last = problemSummary(res.status, answer);
      } catch (e) {
        // A sign-in whose session ended fails every retry alike: stop now and say how to go on.
        if (e instanceof SignInEnded)
          throw new SignInEnded(
            `${e.message}, then run the same identity-cli migrate-from command again: the batches imported so far answer already_imported and the run goes on with the rest`,
          );
        last = (e as Error).message;
      }
    }
    throw new CliError(`${method} ${path} failed after ${RETRIES} retries: ${last}`);
  }

  async ok(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Body> {
    const r = await this.call(method, path, body, headers);
    if (r.status >= 400) throw new CliError(`${method} ${path}: ${problemSummary(r.status, r.body)}`);
    return r.body;
  }

  /** Every item of a listing, following next_cursor. */
  async all(path: string): Promise<Body[]> {
    const out: Body[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.ok(
        'GET',
        `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      out.push(...((page.items as Body[] | undefined) ?? []));
      cursor = (page.next_cursor as string | null | undefined) ?? null;
    } while (cursor);
    return out;
  }

  /** Polls GET /jobs/{id} every second until the job is final. */
  async waitForJob(jobId: string): Promise<Body> {
    for (;;) {
      const job = await this.ok('GET', `/jobs/${jobId}`);
      if (FINAL.has(String(job.state))) return job;
      await sleep(POLL_MS);
    }
  }
}
