// SQL for the links between local users and groups and their copies at a target (migration 0057),
// and the pages of local resources the push sweep walks.
import { many, type Queryable } from '../platform/db/db.ts';
import type { Linked, LocalGroup, LocalUser } from './push-plan.ts';

export type Direction = 'push' | 'pull';
export type LocalType = 'user' | 'group';

export interface LinkKey {
  realmId: string;
  targetId: string;
  direction: Direction;
  localType: LocalType;
  localId: string;
}

export async function upsertLink(
  q: Queryable,
  k: LinkKey,
  remoteId: string,
  digest: string | null,
  now: Date,
): Promise<void> {
  await q.query(
    `insert into provisioning_links (realm_id, target_id, direction, local_type, local_id, remote_id,
       pushed_digest, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8)
     on conflict (realm_id, target_id, direction, local_type, local_id)
       do update set remote_id = excluded.remote_id, pushed_digest = excluded.pushed_digest,
         updated_at = excluded.updated_at`,
    [k.realmId, k.targetId, k.direction, k.localType, k.localId, remoteId, digest, now],
  );
}

export async function deleteLink(q: Queryable, k: LinkKey): Promise<void> {
  await q.query(
    `delete from provisioning_links
      where realm_id = $1 and target_id = $2 and direction = $3 and local_type = $4 and local_id = $5`,
    [k.realmId, k.targetId, k.direction, k.localType, k.localId],
  );
}

/** Every link of one direction and type of a target: remote id to local id. */
export const linksOf = (
  q: Queryable,
  realmId: string,
  targetId: string,
  direction: Direction,
  type: LocalType,
) =>
  many<{ local_id: string; remote_id: string; pushed_digest: string | null }>(
    q,
    `select local_id, remote_id, pushed_digest from provisioning_links
      where realm_id = $1 and target_id = $2 and direction = $3 and local_type = $4`,
    [realmId, targetId, direction, type],
  );

/** A local user as the push sweep sees it, with its link when it has one. */
export type PushUserRow = LocalUser & Linked;

/** Where a sweep page starts: the target, its scope, and the last id of the page before. */
export interface PageStart {
  realmId: string;
  targetId: string;
  organizationId: string | null;
  after: string;
  limit: number;
}

const pageParams = (p: PageStart) => [p.realmId, p.targetId, p.organizationId, p.after, p.limit];

const IDENTIFIER = (type: string) =>
  `(select i.value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
     and i.type = '${type}' order by i.is_primary desc, i.created_at limit 1)`;

const MEMBER_OF_ORG = `exists (select 1 from memberships m where m.realm_id = u.realm_id and m.user_id = u.id
  and m.organization_id = $3 and m.state = 'active')`;

const linkJoin = (alias: string, type: LocalType, localColumn: string) =>
  `left join provisioning_links ${alias} on ${alias}.realm_id = $1 and ${alias}.target_id = $2
     and ${alias}.direction = 'push' and ${alias}.local_type = '${type}' and ${alias}.local_id = ${localColumn}`;

const notPulled = (type: LocalType, localColumn: string) =>
  `not exists (select 1 from provisioning_links p where p.realm_id = $1 and p.target_id = $2
     and p.direction = 'pull' and p.local_type = '${type}' and p.local_id = ${localColumn})`;

/**
 * A page of the users a target holds or should hold, after `after` in id order: the realm's users
 * (realm target) or the organization's active members (organization target), and any user it
 * still has a copy of. Users this target's own directory.sync brought in are not sent back.
 */
export const pushUserPage = (q: Queryable, p: PageStart) =>
  many<PushUserRow>(
    q,
    `select u.id, u.state, u.display_name, ${IDENTIFIER('email')} as email,
       ${IDENTIFIER('username')} as username, l.remote_id, l.pushed_digest,
       ($3::text is null or ${MEMBER_OF_ORG}) as in_scope
     from users u ${linkJoin('l', 'user', 'u.id')}
     where u.realm_id = $1 and u.id > $4 and ${notPulled('user', 'u.id')}
       and (l.local_id is not null or $3::text is null or ${MEMBER_OF_ORG})
     order by u.id limit $5`,
    pageParams(p),
  );

/** A local group with its link, and the remote ids of its user members the target holds, sorted. */
export type PushGroupRow = LocalGroup & Linked;

/** A page of the groups of the target's scope (the realm's own, or the organization's). */
export const pushGroupPage = (q: Queryable, p: PageStart) =>
  many<PushGroupRow>(
    q,
    `select g.id, g.name, l.remote_id, l.pushed_digest,
       coalesce((select array_agg(ml.remote_id order by ml.remote_id) from group_members gm
                  join provisioning_links ml on ml.realm_id = gm.realm_id and ml.target_id = $2
                   and ml.direction = 'push' and ml.local_type = 'user' and ml.local_id = gm.subject_id
                 where gm.realm_id = g.realm_id and gm.group_id = g.id and gm.subject_type = 'user'),
                '{}') as member_remote_ids
     from groups g ${linkJoin('l', 'group', 'g.id')}
     where g.realm_id = $1 and g.organization_id is not distinct from $3 and g.id > $4
       and ${notPulled('group', 'g.id')}
     order by g.id limit $5`,
    pageParams(p),
  );

/** Groups the target still has a copy of that no longer exist here. */
export const orphanGroupLinks = (q: Queryable, realmId: string, targetId: string, limit: number) =>
  many<{ local_id: string; remote_id: string }>(
    q,
    `select l.local_id, l.remote_id from provisioning_links l
      where l.realm_id = $1 and l.target_id = $2 and l.direction = 'push' and l.local_type = 'group'
        and not exists (select 1 from groups g where g.realm_id = l.realm_id and g.id = l.local_id)
      order by l.local_id limit $3`,
    [realmId, targetId, limit],
  );
