// In-flight limit per process (spec doc 2, Limits; decision D11). Ordinary requests stop at
// max minus the reserved pool; health paths and administrative requests carrying credentials may
// use the whole limit, so operators can still see and steer an overloaded server.
import type { IncomingMessage } from 'node:http';

export type Pool = 'ordinary' | 'reserved';

export const reservedPoolSize = (max: number): number => Math.floor(max / 4) + 1;

// Realm-scoped paths that serve end users (self-service, sign-in, registration), not administration.
const NOT_ADMIN = new Set(['me', 'auth', 'registrations']);

export function poolFor(req: IncomingMessage): Pool {
  const url = req.url ?? '/';
  if (url.startsWith('/health/')) return 'reserved';
  if (req.headers.authorization && isAdminPath(url)) return 'reserved';
  return 'ordinary';
}

/**
 * `/api/v1/realms/{realm}/{x}/...` with x not an end-user area. The router matches segments after
 * percent-decoding them, so the check does too: `%6De` is `me` and must not borrow the reserved pool.
 */
function isAdminPath(url: string): boolean {
  const q = url.indexOf('?');
  const seg = (q < 0 ? url : url.slice(0, q)).split('/');
  if (seg[0] !== '' || seg[1] !== 'api' || seg[2] !== 'v1' || seg[3] !== 'realms' || !seg[4]) return false;
  const area = decodeSegment(seg[5] ?? '');
  return area !== null && area !== '' && !NOT_ADMIN.has(area);
}

function decodeSegment(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export class InflightGate {
  private inflight = 0;
  private readonly max: number;
  private readonly ordinaryLimit: number;

  constructor(max: number) {
    this.max = max;
    this.ordinaryLimit = Math.max(1, max - reservedPoolSize(max));
  }

  tryEnter(pool: Pool): boolean {
    const limit = pool === 'reserved' ? this.max : this.ordinaryLimit;
    if (this.inflight >= limit) return false;
    this.inflight++;
    return true;
  }

  leave(): void {
    this.inflight--;
  }

  get current(): number {
    return this.inflight;
  }
}
