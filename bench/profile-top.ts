// Where a V8 CPU profile (node --cpu-prof) spends its time: functions by self time, idle excluded.
// bench/run.ts appends the top of the server's profile to the report when PROFILE=1.
//
// usage: node --import tsx bench/profile-top.ts FILE.cpuprofile [N]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_DIR } from './common.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  where: string;
  ms: number;
  /** Share of the profile's busy (non-idle) time. */
  share: number;
}

/** Where a function lives, coarsely: an npm package, a src/ folder, node's own JS, or native/V8. */
export function areaOf(where: string, name: string): string {
  if (name.startsWith('(') && where === '') return name;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where);
  if (pkg) return pkg[1] as string;
  const src = /^src\/([^/]+)/.exec(where);
  if (src) return `src/${src[1]}`;
  if (where.startsWith('node:internal/crypto')) return 'node crypto (WebCrypto jobs: signing, verifying)';
  if (/^node:(_http|http|internal\/http)/.test(where)) return 'node http';
  if (/^node:(net|stream|internal\/stream|internal\/streams|internal\/stream_base)/.test(where))
    return 'node net and streams';
  if (/^node:(events|internal\/process\/task_queues|internal\/timers|timers)/.test(where))
    return 'node events, ticks, timers';
  if (/^node:internal\/(modules|bootstrap|deps\/cjs)/.test(where)) return 'node module loading';
  if (where.startsWith('node:')) return 'node (other)';
  if (where === '') return 'native (syscalls, builtins)';
  return where.split('/')[0] ?? where;
}

export function topSelfTime(
  file: string,
  n = 10,
): {
  busyMs: number;
  totalMs: number;
  top: SelfTime[];
  areas: Array<{ area: string; ms: number; share: number }>;
} {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute the time after a sample to it.
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i] as number;
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt));
  }
  const agg = new Map<string, SelfTime>();
  let busyUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    const cf = node.callFrame;
    if (cf.functionName === '(idle)') continue;
    busyUs += us;
    const url = cf.url.startsWith('file://') ? relative(REPO_DIR, fileURLToPath(cf.url)) : cf.url;
    const where = url ? `${url}:${cf.lineNumber + 1}` : '';
    const name = cf.functionName || '(anonymous)';
    const key = `${name} ${where}`;
    const cur = agg.get(key) ?? { name, where, ms: 0, share: 0 };
    cur.ms += us / 1000;
    agg.set(key, cur);
  }
  const share = (ms: number) => (busyUs > 0 ? +((ms * 1000) / busyUs).toFixed(4) : 0);
  const all = [...agg.values()].sort((a, b) => b.ms - a.ms);
  const top = all.slice(0, n).map((t) => ({ ...t, ms: +t.ms.toFixed(1), share: share(t.ms) }));
  const byArea = new Map<string, number>();
  for (const t of all) {
    const area = areaOf(t.where, t.name);
    byArea.set(area, (byArea.get(area) ?? 0) + t.ms);
  }
  const areas = [...byArea.entries()]
    .map(([area, ms]) => ({ area, ms: +ms.toFixed(1), share: share(ms) }))
    .sort((a, b) => b.ms - a.ms);
  return { busyMs: busyUs / 1000, totalMs: totalUs / 1000, top, areas };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: profile-top.ts FILE.cpuprofile [N]\n');
    process.exit(2);
  }
  const r = topSelfTime(file, Number(process.argv[3] ?? 15));
  process.stdout.write(`busy ${r.busyMs.toFixed(0)} ms of ${r.totalMs.toFixed(0)} ms profiled\n`);
  for (const t of r.top) {
    process.stdout.write(
      `${(t.share * 100).toFixed(1).padStart(5)}%  ${t.ms.toFixed(0).padStart(7)} ms  ${t.name}  ${t.where}\n`,
    );
  }
  process.stdout.write('\nby area:\n');
  for (const a of r.areas.slice(0, 20)) {
    process.stdout.write(
      `${(a.share * 100).toFixed(1).padStart(5)}%  ${a.ms.toFixed(0).padStart(7)} ms  ${a.area}\n`,
    );
  }
}
