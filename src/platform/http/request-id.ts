// X-Request-Id: a client's id is kept when it is 1..64 printable ASCII characters, otherwise a new
// one is generated (spec doc 2, Limits). Fastify's own requestIdHeader would trust it as is.
import { randomUUID } from 'node:crypto';

const PRINTABLE = /^[\x20-\x7e]{1,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && PRINTABLE.test(header) ? header : randomUUID();
}
