// The caller as the delegation ceiling sees it (docs/api-roles.md): who it is, what it holds now
// and how its session was authenticated. The API edge's authenticated caller is one.

export interface Delegator {
  kind: 'user' | 'service_principal';
  id: string;
  /** Permissions held at realm scope, plus inside the route's organization when it names one. */
  permissions: ReadonlySet<string>;
  sessionMfa: boolean;
  /** Seconds since the epoch, when the token says. */
  authTime: number | null;
}
