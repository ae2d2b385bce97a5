// Stored tokens and codes are kept as digests only (refresh tokens, opaque access tokens,
// transaction continuation tokens, authorization and handoff codes): a database read never yields
// a usable credential.
import { createHash } from 'node:crypto';

/** Hex SHA-256 of a high-entropy token; its lookup key and what is stored in its place. */
export const digestToken = (value: string): string => createHash('sha256').update(value).digest('hex');
