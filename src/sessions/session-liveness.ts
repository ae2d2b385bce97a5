// When a browser session is live (document 1, session lifetimes): not revoked and before both its
// idle and its absolute expiry. Every statement that asks reads this fragment, so the rule is
// written once; the live-access statement (access/) and the token grants embed it too.

/** SQL condition: the session row `alias` is live at the timestamp expression `now`. */
export const liveSessionSql = (alias: string, now: string): string =>
  `${alias}.revoked_at is null and ${alias}.idle_expires_at > ${now} and ${alias}.absolute_expires_at > ${now}`;
