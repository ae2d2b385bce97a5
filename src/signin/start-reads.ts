// The client and the realm policy a start reads, kept for that one start: the pushed-request
// check, the validation, the new transaction's evaluation and the authorization endpoint's login UI
// all ask for them, in one database transaction that changes neither (issue 37: one read each).
// The first client read brings the realm policy in the same statement, since nearly every start
// asks for it next.
import type { ClientRow } from '../clients/index.ts';
import { clientRowJsonSql, clientRowOfJson } from '../clients/index.ts';
import { one, type Queryable } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { currentPolicy, policyJsonSql, policyOfJson } from '../realms/index.ts';

const CLIENT_AND_POLICY_SQL = `select ${clientRowJsonSql('$1', '$2')} as client, ${policyJsonSql('$1')} as policy`;

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
      read = this.policyRead ? this.clientAlone(clientId) : this.clientWithPolicy(clientId);
      this.clients.set(clientId, read);
    }
    return read;
  }

  policy(): Promise<RealmPolicy> {
    this.policyRead ??= currentPolicy(this.q, this.realmId);
    return this.policyRead;
  }

  private async clientAlone(clientId: string): Promise<ClientRow | null> {
    const row = await one<{ client: unknown }>(this.q, `select ${clientRowJsonSql('$1', '$2')} as client`, [
      this.realmId,
      clientId,
    ]);
    return clientRowOfJson(row.client);
  }

  private clientWithPolicy(clientId: string): Promise<ClientRow | null> {
    const both = one<{ client: unknown; policy: unknown }>(this.q, CLIENT_AND_POLICY_SQL, [
      this.realmId,
      clientId,
    ]);
    this.policyRead = both.then((r) => policyOfJson(this.realmId, r.policy));
    // The policy read is the client read: its failure is reported by whoever awaits the client.
    this.policyRead.catch(() => undefined);
    return both.then((r) => clientRowOfJson(r.client));
  }
}
