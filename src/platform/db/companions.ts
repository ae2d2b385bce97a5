// Several writes of one change in one statement (issue 37, statements per sign-in): data-modifying
// statements joined as the WITH parts of a last one, whose rows come back. PostgreSQL runs every
// part whether or not the last one reads it, on one snapshot, and checks foreign keys at the end of
// the statement, so a part may name a row another part inserts.

/** One statement and its parameters ($1.. of its own); a statement to join has no WITH of its own. */
export interface Companion {
  sql: string;
  params: readonly unknown[];
}

const shifted = (sql: string, by: number) => sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);

/** `parts` as the WITH parts of `main`, in order; the statement returns `main`'s rows. */
export function together(main: Companion, ...parts: Companion[]): Companion {
  if (parts.length === 0) return main;
  const params: unknown[] = [];
  const ctes: string[] = [];
  for (const [i, c] of [...parts, main].entries()) {
    if (/^\s*with\b/i.test(c.sql)) throw new Error('a joined statement brings no WITH of its own');
    const sql = shifted(c.sql, params.length);
    params.push(...c.params);
    if (i < parts.length) ctes.push(`part${i} as (${sql})`);
    else return { sql: `with ${ctes.join(', ')} ${sql}`, params };
  }
  throw new Error('unreachable');
}
