// What a client_credentials token reads besides the realm is configuration: the client with its
// secrets, its service principal, the named resource, the client's grant for it and the realm's
// active key. This process keeps what it last read for each (realm, client, resource), tagged with
// the realm's clients_revision read in the same snapshot; every write to those tables moves that
// revision in its own transaction (migrations/0024_clients_revision.sql). A request that finds a
// copy reads only the realm's current revision (one statement shared by the requests of an
// event-loop turn) and uses the copy when the two are equal, so a disabled client, a revoked
// secret or grant and a compromised key count from their commit on every server, as when
// everything was read per request (docs/decisions.md).
import type { ClientAuthRow } from '../../clients/index.ts';
import { many, type Queryable } from '../../platform/db/db.ts';
import { KeptCopies } from '../../platform/kept-copies.ts';
import { TurnBatch } from '../../platform/turn-batch.ts';
import type { ServicePrefetch } from './grant-context.ts';

export interface ServiceTokenFacts {
  /** realms.clients_revision when these were read, as text (bigint). */
  revision: string;
  caller: ClientAuthRow | null;
  prefetch: ServicePrefetch;
}

// Pairs of a client and a resource this process holds.
const kept = new KeptCopies<ServiceTokenFacts>(5000);

const keyOf = (realmId: string, clientId: string, audience: string | null): string =>
  `${realmId}\n${clientId}\n${audience ?? ''}`;

/** The copy this process holds for the request, if any (its revision still to be checked). */
export const keptServiceToken = (
  realmId: string,
  clientId: string,
  audience: string | null,
): ServiceTokenFacts | undefined => kept.get(keyOf(realmId, clientId, audience));

/** Keeps what a statement read; a newer read of the same pair replaces it. */
export const keepServiceToken = (
  realmId: string,
  clientId: string,
  audience: string | null,
  facts: ServiceTokenFacts,
): void => kept.set(keyOf(realmId, clientId, audience), facts);

// The revisions of the realms asked for in one turn of the event loop, read by one statement sent
// after they were all asked (platform/turn-batch.ts), so each request still sees every commit that
// preceded it. One batch per database handle.
const batches = new WeakMap<Queryable, TurnBatch<string>>();

/** The realm's clients_revision now, as text. */
export function currentClientsRevision(db: Queryable, realmId: string): Promise<string | undefined> {
  let batch = batches.get(db);
  if (batch === undefined) {
    batch = new TurnBatch(async (realmIds) => {
      const rows = await many<{ id: string; revision: string }>(
        db,
        'select id, clients_revision::text as revision from realms where id = any ($1::text[])',
        [realmIds],
      );
      return new Map(rows.map((r) => [r.id, r.revision]));
    });
    batches.set(db, batch);
  }
  return batch.get(realmId);
}
