// The physical limit of the password step: @node-rs/argon2 verify with the server's parameters
// (configuration defaults: Argon2id memory, iterations, lanes) and its concurrency cap
// (security.password.max_concurrent_hashes), for a bounded time. bench/run.ts pins it to the
// server's core (taskset -c 0) while the server is idle. Prints one JSON line.
//
// usage: node --import tsx bench/argon-bare.ts --duration SECONDS
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { hash, verify } from '@node-rs/argon2';
import { loadConfig } from '../src/platform/config/load.ts';
import { PASSWORD } from './common.ts';

const ARGON2ID = 2; // Algorithm.Argon2id (a const enum the package exports)

const { values } = parseArgs({ options: { duration: { type: 'string' }, warmup: { type: 'string' } } });
const durationS = Number(values.duration ?? 15);
const warmupS = Number(values.warmup ?? 1);
const p = loadConfig({ file: null, env: {} }).security.password;

const phc = await hash(PASSWORD, {
  algorithm: ARGON2ID,
  memoryCost: p.argonMemoryKib,
  timeCost: p.argonIterations,
  parallelism: p.argonParallelism,
});

/** `cap` loops verifying back to back until the deadline: a semaphore of `cap` with a full queue. */
async function saturate(seconds: number, record: boolean) {
  const deadline = performance.now() + seconds * 1000;
  const lat: number[] = [];
  let ok = 0;
  let bad = 0;
  await Promise.all(
    Array.from({ length: p.maxConcurrentHashes }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        if (await verify(phc, PASSWORD)) ok++;
        else bad++;
        if (record) lat.push(performance.now() - t);
      }
    }),
  );
  return { ok, bad, lat };
}

await saturate(warmupS, false);
const c0 = process.cpuUsage();
const t0 = performance.now();
const r = await saturate(durationS, true);
const wall = (performance.now() - t0) / 1000;
const c1 = process.cpuUsage(c0);
const cores = (c1.user + c1.system) / 1e6 / wall;
r.lat.sort((a, b) => a - b);
const verifies = r.ok + r.bad;
process.stdout.write(
  `${JSON.stringify({
    label: 'argon2id verify (bare)',
    memory_kib: p.argonMemoryKib,
    t: p.argonIterations,
    p: p.argonParallelism,
    cap: p.maxConcurrentHashes,
    uv_threadpool: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
    wall_s: +wall.toFixed(2),
    verifies,
    failed: r.bad,
    verify_s: +(verifies / wall).toFixed(2),
    cores: +cores.toFixed(2),
    user_cores: +(c1.user / 1e6 / wall).toFixed(3),
    sys_cores: +(c1.system / 1e6 / wall).toFixed(3),
    cpu_ms_per_verify: verifies ? +((cores * wall * 1000) / verifies).toFixed(1) : null,
    lat_p50_ms: +(r.lat[Math.floor(r.lat.length / 2)] ?? 0).toFixed(1),
    lat_max_ms: +(r.lat[r.lat.length - 1] ?? 0).toFixed(1),
  })}\n`,
);
