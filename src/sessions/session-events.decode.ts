// The query of GET /session-events (document 1, realm API table; Limits: session-event wait): an
// opaque cursor and a wait of 0 to 25 whole seconds. Anything else is 400 invalid_request.
import { cursorBinding, openCursor } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';

export const MAX_WAIT_SECONDS = 25;

export interface StreamQuery {
  /** The position to read after; null reads from the oldest event kept. */
  after: string | null;
  waitSeconds: number;
}

/** A position: a bigint in decimal, without sign or leading zeros. */
export const isPosition = (s: string): boolean => /^(0|[1-9][0-9]{0,17})$/.test(s);

/** What a cursor of this realm's stream is bound to: another realm's cursor is refused. */
export const streamBinding = (realmId: string): string => cursorBinding(['session-events', realmId]);

export function decodeStreamQuery(rawQuery: unknown, realmId: string): StreamQuery {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(query))
    if (name !== 'cursor' && name !== 'wait')
      throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
  const single = (name: string): string | null => {
    const v = query[name];
    if (v === undefined) return null;
    if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
    return v;
  };
  const waitText = single('wait');
  let waitSeconds = 0;
  if (waitText !== null) {
    if (!/^[0-9]{1,2}$/.test(waitText) || Number(waitText) > MAX_WAIT_SECONDS)
      throw problem.invalidRequest(`wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
    waitSeconds = Number(waitText);
  }
  const after = openCursor(single('cursor'), streamBinding(realmId), isPosition);
  return { after, waitSeconds };
}
