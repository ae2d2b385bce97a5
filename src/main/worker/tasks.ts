// The worker's periodic tasks: name, interval, function (STYLE.md section 7).
import { cleanupOutbox, dispatchOutbox } from '../../events/outbox-dispatch.task.ts';
import type { Task } from '../../kernel/task.ts';
import { type KeyLifecycleDeps, runKeyLifecycle } from '../../keys/key-lifecycle.task.ts';
import { sweepMemberships } from '../../organizations/membership-expiry.task.ts';
import { cleanupTokens } from '../../sessions/token-cleanup.task.ts';
import { cleanupSignin } from '../../signin/signin-cleanup.task.ts';

export type WorkerDeps = KeyLifecycleDeps & { sessionRetentionMs: number };

export const TASKS: readonly Task<WorkerDeps>[] = [
  { name: 'keys.lifecycle', intervalMs: 60_000, run: runKeyLifecycle },
  { name: 'outbox.dispatch', intervalMs: 1_000, run: dispatchOutbox },
  { name: 'outbox.cleanup', intervalMs: 3_600_000, run: cleanupOutbox },
  { name: 'signin.cleanup', intervalMs: 600_000, run: cleanupSignin },
  { name: 'tokens.cleanup', intervalMs: 600_000, run: cleanupTokens },
  { name: 'organizations.memberships', intervalMs: 60_000, run: sweepMemberships },
];
