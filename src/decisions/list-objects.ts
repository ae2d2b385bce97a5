// POST /authorization/list-objects (spec doc 1, Resources, grants and decisions; doc 2, Limits:
// list-objects 500 per page, 5000 candidates, 1000 checks; docs/authorization.md, "Listing
// objects"). Candidates are the objects of the type reachable upwards from the subject through
// tuples; each is then checked like a decision, in id order, and a cursor continues the walk.
import { createHash } from 'node:crypto';
import { checkLiveness } from '../oauth/tokens/token-liveness.ts';
import { many } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { evaluateChecks, MAX_DEPTH } from '../relationships/graph.ts';
import { definesName } from '../relationships/model.ts';
import { tuplesOfObjects } from '../relationships/relationships.repo.ts';
import { storedScopes } from './assurance.ts';
import type { ReasonCode } from './decision.ts';
import type { ListObjectsRequest } from './decisions.decode.ts';
import type { DecisionDeps } from './evaluated.ts';
import { subjectHolds } from './local-rules.ts';
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

// Upwards from the subject and the subject sets it is in: every object whose tuples name a node
// reached so far, MAX_DEPTH levels at most, tuples of another organization skipped.
const CANDIDATES_SQL = `
with recursive reach(node_type, node_id, depth) as (
  select * from unnest($2::text[], $3::text[], array_fill(0, array[cardinality($2::text[])]))
  union
  select t.object_type, t.object_id, r.depth + 1
    from reach r join authz_tuples t on t.realm_id = $1 and t.subject_type = r.node_type and t.subject_id = r.node_id
   where r.depth < ${MAX_DEPTH} and ($4::text is null or t.org_id is null or t.org_id = $4)
)
select distinct node_id as id from reach
 where node_type = $5 and depth > 0 and ($6::text is null or node_id > $6)
 order by node_id limit $7`;

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
    );
    if (refused) return none(refused.code);
  }

  const binding = cursorBinding(realm.id, token.subject, r, org);
  const after = r.cursor === undefined ? null : openCursor(r.cursor, binding);
  const subjectType = live.subjectType === 'service_principal' ? 'service_principal' : 'user';
  const seeds: [string, string][] = [
    [subjectType, token.subject],
    ...d.memberOrgIds.map((id): [string, string] => ['organization', id]),
    ...d.groupIds.map((id): [string, string] => ['group', id]),
  ];
  // One more than can be checked tells whether a next page exists.
  const candidates = await many<{ id: string }>(app.db, CANDIDATES_SQL, [
    realm.id,
    seeds.map((s) => s[0]),
    seeds.map((s) => s[1]),
    org,
    r.resourceType,
    after,
    Math.min(MAX_CANDIDATES, MAX_CHECKS + 1),
  ]);
  const examinable = candidates.slice(0, MAX_CHECKS).map((c) => c.id);
  const subject = {
    type: subjectType,
    id: token.subject,
    memberOrgIds: new Set(d.memberOrgIds),
    groupIds: new Set(d.groupIds),
  } as const;
  const objects: string[] = [];
  let examined = 0;
  let last: string | null = null;
  // Checked a chunk at a time: a page that fills early spends no more checks.
  while (objects.length < r.pageSize && examined < examinable.length) {
    const chunk = examinable.slice(examined, examined + Math.max(r.pageSize, 100));
    const answers = await evaluateChecks(
      types.types,
      chunk.map((id) => ({ objectType: r.resourceType, objectId: id, name: r.action, orgId: org, subject })),
      (keys) => tuplesOfObjects(app.db, realm.id, keys),
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
