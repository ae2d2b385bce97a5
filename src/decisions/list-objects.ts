// POST /authorization/list-objects (spec doc 1, Resources, grants and decisions; doc 2, Limits:
// list-objects 500 per page, 5000 candidates, 1000 checks; docs/authorization.md, "Listing
// objects"). Candidates are the objects of the type reachable upwards from the subject through
// tuples, a reach of at most 5000 objects (beyond it the listing fails closed); each is then
// checked like a decision, in id order, and a cursor continues the walk.
import { createHash } from 'node:crypto';
import { checkLiveness } from '../access/token-liveness.ts';
import { many } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { evaluateChecks, MAX_DEPTH, type ObjectKey } from '../relationships/graph.ts';
import { tuplesOfObjects } from '../relationships/index.ts';
import { definesName } from '../relationships/model.ts';
import { storedScopes } from './assurance.ts';
import type { ReasonCode } from './decision.ts';
import type { ListObjectsRequest } from './decisions.decode.ts';
import type { DecisionDeps } from './evaluated.ts';
import { graphSubject, subjectHolds } from './local-rules.ts';
import { livenessFactsOf, resolveSubjectToken } from './subject-token.ts';
import { supportAccessOutcome } from './support-access.ts';
import { knownTypes, rememberTypes } from './type-cache.ts';

export const MAX_CANDIDATES = 5000;
export const MAX_CHECKS = 1000;

export interface ObjectList {
  objects: string[];
  next_cursor: string | null;
  /** Present when nothing could be listed: why. */
  reason_code?: ReasonCode;
}

const none = (reason: ReasonCode): ObjectList => ({ objects: [], next_cursor: null, reason_code: reason });

// One level of the upward reach: the objects whose tuples name a node of the frontier, not reached
// before, tuples the subject's organizations do not admit skipped (the evaluator's rule, graph.ts
// countsInOrganization), at most $8 rows.
const LEVEL_SQL = `
select distinct t.object_type, t.object_id
  from authz_tuples t
  join unnest($2::text[], $3::text[]) as f(node_type, node_id)
    on t.subject_type = f.node_type and t.subject_id = f.node_id
 where t.realm_id = $1
   and not exists (select 1 from unnest($4::text[], $5::text[]) as s(object_type, object_id)
                    where s.object_type = t.object_type and s.object_id = t.object_id)
   and (t.org_id is null or (($6::text is null or t.org_id = $6)
        and ($7::text[] is null or t.org_id = any ($7::text[]))
        and exists (select 1 from organizations o where o.realm_id = $1 and o.id = t.org_id and o.state = 'active')))
 limit $8`;

/**
 * Every object reachable upwards from the seeds in at most MAX_DEPTH levels (one statement per
 * level), or null when more than MAX_CANDIDATES are: the listing then fails closed rather than
 * answer from part of the reach.
 */
async function reachOf(
  deps: DecisionDeps,
  seeds: readonly ObjectKey[],
  org: string | null,
  tupleOrgIds: readonly string[] | null,
): Promise<ObjectKey[] | null> {
  const reached = new Map<string, ObjectKey>();
  let frontier: readonly ObjectKey[] = seeds;
  for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0; depth++) {
    const left = MAX_CANDIDATES - reached.size;
    const seen = [...reached.values()];
    const rows = await many<{ object_type: string; object_id: string }>(deps.app.db, LEVEL_SQL, [
      deps.realm.id,
      frontier.map((k) => k.type),
      frontier.map((k) => k.id),
      seen.map((k) => k.type),
      seen.map((k) => k.id),
      org,
      tupleOrgIds,
      left + 1,
    ]);
    if (rows.length > left) return null;
    frontier = rows.map((r) => ({ type: r.object_type, id: r.object_id }));
    for (const k of frontier) reached.set(JSON.stringify([k.type, k.id]), k);
  }
  return [...reached.values()];
}

function cursorBinding(realmId: string, subject: string, r: ListObjectsRequest, org: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([realmId, subject, r.action, r.resourceType, org]))
    .digest('base64url')
    .slice(0, 22);
}

function openCursor(cursor: string, binding: string): string {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    // answered by the problem below
  }
  const c = parsed as { a?: unknown; b?: unknown } | null;
  if (!c || typeof c !== 'object' || c.b !== binding || typeof c.a !== 'string')
    throw problem.invalidRequest('invalid cursor');
  return c.a;
}

export async function listObjects(deps: DecisionDeps, r: ListObjectsRequest): Promise<ObjectList> {
  const { app, realm } = deps;
  const now = app.clock.now();
  const token = await resolveSubjectToken(app, realm, r.subjectToken, now);
  if (!token) return none('SUBJECT_TOKEN_INACTIVE');
  const org = token.orgId ?? r.orgId ?? null;
  const known = knownTypes(realm.id);
  const live = await checkLiveness(
    app.db,
    {
      ...livenessFactsOf(realm.id, token),
      // Answers whether the subject is live in the organization (liveOrgIds).
      rolesOrgIds: org === null ? [] : [org],
      decision: {
        // A support token's rules need the action's registered sensitivity.
        actions: token.supportGrantId !== null ? [r.action] : [],
        resourceTypes: [r.resourceType],
        knownTypesRevision: known?.revision ?? null,
      },
    },
    now,
  );
  if (!subjectHolds(live)) return none('SUBJECT_TOKEN_INACTIVE');
  if (token.orgId !== null && r.orgId !== undefined && r.orgId !== token.orgId)
    return none('ORGANIZATION_MISMATCH');
  const d = live.decision;
  if (!d || !d.definedTypes.includes(r.resourceType)) return none('INVALID_REQUEST');
  const types = d.types ? rememberTypes(realm.id, d.authzRevision, d.types) : known;
  const type = types?.types.get(r.resourceType);
  if (!types || types.revision !== d.authzRevision || !type) return none('EVALUATION_ERROR');
  if (!definesName(type, r.action)) return none('INVALID_REQUEST');
  if (token.supportGrantId !== null) {
    if (!live.support) return none('SUBJECT_TOKEN_INACTIVE');
    const refused = supportAccessOutcome(
      live.support,
      storedScopes(d.resourceScopes),
      d.sensitivities,
      r.action,
      token.scopes,
    );
    if (refused) return none(refused.code);
  }

  // As for checks (local-rules.ts): nothing is listed in an organization the subject is not live in.
  if (org !== null && !d.liveOrgIds.includes(org)) return none('NOT_PERMITTED');

  const binding = cursorBinding(realm.id, token.subject, r, org);
  const after = r.cursor === undefined ? null : openCursor(r.cursor, binding);
  const subject = graphSubject(live, token.subject);
  const seeds: ObjectKey[] = [
    { type: subject.type, id: token.subject },
    ...d.memberOrgIds.map((id) => ({ type: 'organization', id })),
    ...d.groupIds.map((id) => ({ type: 'group', id })),
  ];
  const reach = await reachOf(
    deps,
    seeds,
    org,
    subject.tupleOrgIds === 'any' ? null : [...subject.tupleOrgIds],
  );
  if (reach === null) return none('EVALUATION_ERROR');
  // One more than can be checked tells whether a next page exists.
  const candidates = reach
    .filter((k) => k.type === r.resourceType && (after === null || k.id > after))
    .map((k) => k.id)
    .sort()
    .slice(0, MAX_CHECKS + 1);
  const examinable = candidates.slice(0, MAX_CHECKS);
  const objects: string[] = [];
  let examined = 0;
  let last: string | null = null;
  // Checked a chunk at a time: a page that fills early spends no more checks.
  while (objects.length < r.pageSize && examined < examinable.length) {
    const chunk = examinable.slice(examined, examined + Math.max(r.pageSize, 100));
    const answers = await evaluateChecks(
      types.types,
      chunk.map((id) => ({ objectType: r.resourceType, objectId: id, name: r.action, orgId: org, subject })),
      (keys, limit) => tuplesOfObjects(app.db, realm.id, keys, limit),
    );
    for (let i = 0; i < chunk.length && objects.length < r.pageSize; i++) {
      last = chunk[i] as string;
      examined++;
      if (answers[i] === 'allowed') objects.push(last);
    }
  }
  const more = last !== null && examined < candidates.length;
  const next = more ? Buffer.from(JSON.stringify({ a: last, b: binding })).toString('base64url') : null;
  return { objects, next_cursor: next };
}
