// In-flight limit per process (spec doc 2, Limits; SPEC-DECISIONS 11). Ordinary requests stop at
// max minus the reserved pool; health paths and administrative requests carrying credentials may
// use the whole limit, so operators can still see and steer an overloaded server.
import type { IncomingMessage } from 'node:http';

export type Pool = 'ordinary' | 'reserved';

export const reservedPoolSize = (max: number): number => Math.floor(max / 4) + 1;

const ADMIN_PATH = /^\/api\/v1\/realms\/[^/]+\/(?!me(?:\/|$|\?)|auth\/)/;

export function poolFor(req: IncomingMessage): Pool {
  const url = req.url ?? '/';
  if (url.startsWith('/health/')) return 'reserved';
  if (req.headers.authorization && ADMIN_PATH.test(url)) return 'reserved';
  return 'ordinary';
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
