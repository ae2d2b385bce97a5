// The provisioning families of spec doc 2, Metrics (service_outbound_provisioning_*,
// service_directory_*): every label drawn from a fixed list, so the series stay bounded
// (docs/provisioning.md, Metrics).
import { countFailingTargets } from '../../provisioning/index.ts';
import type { AppContext } from '../context.ts';

const RESOURCES = new Set(['user', 'group']);
const OPERATIONS = new Set(['create', 'update', 'delete', 'request']);
const PUSH_OUTCOMES = new Set(['accepted', 'rejected', 'unavailable']);
const SYNC_OUTCOMES = new Set(['created', 'updated', 'unchanged', 'deactivated', 'deleted', 'failed']);

const bounded = (allowed: ReadonlySet<string>, v: string) => (allowed.has(v) ? v : 'other');

export function provisioningMetrics(ctx: AppContext) {
  const operations = ctx.metrics.counter(
    'service_outbound_provisioning_operations_total',
    'SCIM requests pushed to provisioning targets, by resource (user, group), operation and outcome',
    ['resource', 'operation', 'outcome'],
  );
  const objects = ctx.metrics.counter(
    'service_directory_sync_objects_total',
    'Users and groups directory.sync jobs reconciled, by resource (user, group) and outcome',
    ['resource', 'outcome'],
  );
  ctx.metrics.gauge(
    'service_outbound_provisioning_failing_targets',
    'Active provisioning targets whose last push run could not reach them',
    () => countFailingTargets(ctx.db),
  );
  return {
    pushed(resource: string, operation: string, outcome: string) {
      operations.inc({
        resource: bounded(RESOURCES, resource),
        operation: bounded(OPERATIONS, operation),
        outcome: bounded(PUSH_OUTCOMES, outcome),
      });
    },
    synced(counts: Record<string, number>) {
      for (const [key, n] of Object.entries(counts)) {
        // Keys are `<resource>s_<outcome>` (provisioning/directory-reconcile.ts).
        const [plural = '', outcome = ''] = key.split(/_(.*)/s);
        objects.inc(
          {
            resource: bounded(RESOURCES, plural.replace(/s$/, '')),
            outcome: bounded(SYNC_OUTCOMES, outcome),
          },
          n,
        );
      }
    },
  };
}
