// The client and the realm policy a start reads, kept for that one start: the pushed-request
// check, the validation, the new transaction's evaluation and the authorization endpoint's login UI
// all ask for them, in one database transaction that changes neither (issue 37: one read each).
import type { ClientRow } from '../clients/index.ts';
import { findClient } from '../clients/index.ts';
import type { Queryable } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { currentPolicy } from '../realms/index.ts';

export class StartReads {
  private readonly clients = new Map<string, Promise<ClientRow | null>>();
  private policyRead: Promise<RealmPolicy> | null = null;
  private readonly q: Queryable;
  private readonly realmId: string;

  constructor(q: Queryable, realmId: string) {
    this.q = q;
    this.realmId = realmId;
  }

  client(clientId: string): Promise<ClientRow | null> {
    let read = this.clients.get(clientId);
    if (!read) {
      read = findClient(this.q, this.realmId, clientId);
      this.clients.set(clientId, read);
    }
    return read;
  }

  policy(): Promise<RealmPolicy> {
    this.policyRead ??= currentPolicy(this.q, this.realmId);
    return this.policyRead;
  }
}
