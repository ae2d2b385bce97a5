// An organization membership counts only in state active and before its expires_at: the expiry
// sweep records the state change later, but the rights end at the instant itself (doc 2,
// Organization membership). Every statement that asks "is this an active member" uses this.

/** SQL condition on a memberships row `alias`, with `now` an SQL expression (a parameter). */
export const liveMembershipSql = (alias: string, now: string): string =>
  `${alias}.state = 'active' and (${alias}.expires_at is null or ${alias}.expires_at > ${now})`;
