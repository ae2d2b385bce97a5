// Server-side latency of one run, from the server's own request log: every request line carries
// its route and `duration_ms` (Fastify's time from the request's arrival to its answer,
// src/platform/http/request-log.ts). The runner notes the log's size before and after a run and
// reads the lines written in between, so the figures are that run's alone. The load generator
// shares its core with PostgreSQL, so its own latency also holds its waits for that core; these
// figures do not.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { percentile } from './common.ts';

export interface ServerLatency {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
}

export const logSize = (file: string): number => statSync(file).size;

/** Latency of the requests to routes ending in `routeSuffix` logged between byte offsets `from` and `to`. */
export function serverLatency(file: string, from: number, to: number, routeSuffix: string): ServerLatency {
  const buf = Buffer.alloc(Math.max(0, to - from));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, from);
  } finally {
    closeSync(fd);
  }
  const durations: number[] = [];
  for (const line of buf.toString('utf8').split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    try {
      const entry = JSON.parse(line) as { route?: string; duration_ms?: number };
      if (entry.route?.endsWith(routeSuffix) && typeof entry.duration_ms === 'number')
        durations.push(entry.duration_ms);
    } catch {
      // a line cut by the window's edge
    }
  }
  durations.sort((a, b) => a - b);
  return {
    requests: durations.length,
    p50: percentile(durations, 50),
    p95: percentile(durations, 95),
    p99: percentile(durations, 99),
  };
}
