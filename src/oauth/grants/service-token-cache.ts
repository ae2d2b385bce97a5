// What a client_credentials token reads besides the realm is configuration: the client with its
// secrets, its service principal, the named resource, the client's grant for it and the realm's
// active key. This process keeps what it last read for each (realm, client, resource), tagged with
// the realm's clients_revision read in the same snapshot; every write to those tables moves that
// revision in its own transaction (migrations/0024_clients_revision.sql). A request that finds a
// copy reads only the realm's current revision and uses the copy when the two are equal, so a
// disabled client, a revoked secret or grant and a compromised key count from their commit on
// every server, as when everything was read per request (docs/decisions.md).
import type { ClientAuthRow } from '../../clients/index.ts';
import { KeptCopies } from '../../platform/kept-copies.ts';
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

/** The SQL reading the realm's current revision ($1: the realm id), as text. */
export const CLIENTS_REVISION_SQL = 'select clients_revision::text as revision from realms where id = $1';
