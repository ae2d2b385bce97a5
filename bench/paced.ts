// Requests at a fixed arrival rate, evenly spaced, for latency at a share of peak. autocannon's
// rate limit lets each connection send its whole second's quota at once when the second starts,
// so every second begins with a burst at full load and the latency measured is that of a
// saturated server. Here request n is due at start + n/rate; it waits for a free connection (of
// `connections`) if none is, and its latency counts from when it was due, so a queue at the
// client shows in the figures (no coordinated omission).
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface PacedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface PacedResult {
  statusCodeStats: Record<string, { count: number }>;
  non2xx: number;
  errors: number;
  timeouts: number;
  requests: { average: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  /** Latencies in ms from each request's due time, sorted. */
  latencies: number[];
}

export async function pacedRun(o: {
  base: string;
  connections: number;
  seconds: number;
  rate: number;
  next: () => PacedRequest;
  onResponse: (status: number, body: string) => void;
}): Promise<PacedResult> {
  const pool = new Pool(o.base, { connections: o.connections, pipelining: 1 });
  const codes: Record<string, { count: number }> = {};
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const pending = new Set<Promise<void>>();
  const interval = 1000 / o.rate;
  const start = performance.now();
  const end = start + o.seconds * 1000;

  const fire = (due: number) => {
    const req = o.next();
    const p = pool
      .request({ method: 'POST', path: req.path, headers: req.headers, body: req.body })
      .then(async (res) => {
        const body = await res.body.text();
        latencies.push(performance.now() - due);
        const code = String(res.statusCode);
        codes[code] = { count: (codes[code]?.count ?? 0) + 1 };
        if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        o.onResponse(res.statusCode, body);
      })
      .catch(() => {
        errors++;
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  };

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(
        Math.floor((Math.min(now, end) - start) / interval) + 1,
        Math.ceil(o.seconds * o.rate),
      );
      while (sent < due) fire(start + sent++ * interval);
      if (now >= end) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, 1);
    tick();
  });
  await Promise.all(pending);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((q / 100) * latencies.length))] ?? 0;
  return {
    statusCodeStats: codes,
    non2xx,
    errors,
    timeouts: 0,
    requests: { average: latencies.length / o.seconds },
    latency: { p50: at(50), p90: at(90), p99: at(99), max: latencies[latencies.length - 1] ?? 0 },
    latencies,
  };
}
