// Load generator: one bounded autocannon run against 127.0.0.1, with the CPU accounting of the
// kit's lt.mjs (server and PostgreSQL process trees from /proc/<pid>/stat, this process's own CPU,
// and the whole machine's busy time from /proc/stat, so foreign load shows). bench/run.ts starts
// it pinned to CPU 1. Prints one JSON line.
//
// usage: node --import tsx bench/lt.ts '<json spec>'   (see Spec)
//   kind get:      GET spec.path on every connection.
//   kind login:    every connection loops start transaction -> identify -> password for seeded
//                  users round-robin; throughput and latency are those of the password step alone.
//   kind form:     POST spec.path with a form body; Authorization headers and bodies are taken in
//                  turn from spec.formFile ({auths, bodies}); every 2xx body is checked (expect).
//   kind codeflow: every connection loops start -> identify -> password -> POST /oauth/token
//                  (authorization_code, PKCE, client_secret_basic with spec.formFile's first
//                  auth); throughput counts token responses, latency is the whole flow's.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon, { type Request } from 'autocannon';
import {
  assertLoopback,
  emailOf,
  HZ,
  LOGIN_CLIENT_ID,
  LOGIN_REDIRECT,
  machineTicks,
  NCPU,
  PASSWORD,
  PKCE_CHALLENGE,
  PKCE_VERIFIER,
  percentile,
  REALM,
  threadsOf,
  threadTicks,
  treeTicks,
  USERS,
} from './common.ts';
import { type PacedRequest, pacedRun } from './paced.ts';

export interface Spec {
  label: string;
  kind: 'get' | 'login' | 'form' | 'codeflow';
  /** http://127.0.0.1:PORT */
  base: string;
  path?: string;
  /** form, codeflow: JSON file {auths?: string[], bodies?: string[]} (argv is too small for tokens). */
  formFile?: string;
  /** form: what a 2xx body must hold (token endpoint: an access token; introspection: active; decisions: a decision_id). */
  expect?: 'access_token' | 'active' | 'decision';
  /** form: the body's content type (default application/x-www-form-urlencoded). */
  contentType?: string;
  /** Fixed arrival rate over all connections (requests/s), for latency at a share of peak. */
  rate?: number;
  c: number;
  d: number;
  serverPids: number[];
  dbPid?: number | null;
}

export interface LtResult {
  label: string;
  kind: Spec['kind'];
  c: number;
  d: number;
  wall_s: number;
  /** GET, form: requests/s (autocannon's per-second average); login: completed password steps/s; codeflow: token responses/s. */
  req_s: number;
  req_total: number;
  /** Every HTTP answer autocannon received. */
  http_total: number;
  /** Every HTTP request autocannon made per second (login: three per sign-in). */
  http_req_s: number;
  lat_p50_ms: number;
  lat_p90_ms: number;
  lat_p99_ms: number;
  lat_max_ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses that were 2xx but not what the scenario expects (login: not `completed`). */
  unexpected: number;
  /** form with expect=active: answers active / inactive (the sample of bodies bench/README.md asks for). */
  active?: number;
  inactive?: number;
  /** form with expect=decision: decisions allowed / denied, and the latency's p95 (client-measured). */
  allowed?: number;
  denied?: number;
  lat_p95_ms?: number;
  status_codes: Record<string, number>;
  unexpected_samples: string[];
  server_cores: number;
  /** The server's main thread alone (event loop: HTTP, JSON, SQL client, JS); the rest is off-loop threads (libuv pool: Argon2; V8 GC and compiler). */
  server_main_cores: number;
  /** Per server thread (main first, then by CPU): user and system cores. */
  server_threads: Array<{ tid: number; main: boolean; user: number; sys: number }>;
  db_cores: number | null;
  loadgen_cores: number;
  box_busy_cores: number;
  foreign_cores: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
assertLoopback(spec.base);

const samples: string[] = [];
const sample = (what: string) => {
  if (samples.length < 5) samples.push(what.slice(0, 300));
};

// ---- login scenario: the chained requests ------------------------------------------------------

const login = {
  done: 0,
  unexpected: 0,
  lat: [] as number[],
  nextUser: 0,
};

const CHALLENGE = PKCE_CHALLENGE;

function loginRequests(): Request[] {
  const base = `/api/v1/realms/${REALM}/auth/transactions`;
  const json = { 'content-type': 'application/json' };
  const tx = (ctx: Record<string, unknown>) => ({ id: String(ctx.id), token: String(ctx.token) });
  return [
    {
      method: 'POST',
      path: base,
      headers: json,
      body: JSON.stringify({
        client_id: LOGIN_CLIENT_ID,
        redirect_uri: LOGIN_REDIRECT,
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
        scope: 'openid',
        state: 'bench-state',
        nonce: 'bench-nonce',
      }),
      onResponse: (status, body, ctx) => {
        if (status !== 201) {
          sample(`start ${status} ${body}`);
          return;
        }
        const j = JSON.parse(body) as { transaction_id: string; continuation_token: string };
        ctx.id = j.transaction_id;
        ctx.token = j.continuation_token;
      },
    },
    {
      method: 'POST',
      setupRequest: (req, ctx) => {
        const user = login.nextUser++ % USERS;
        ctx.user = user;
        const t = tx(ctx);
        return {
          ...req,
          path: `${base}/${t.id}/identify`,
          headers: { ...json, 'x-transaction-token': t.token },
          body: JSON.stringify({ identifier: emailOf(user) }),
        };
      },
      onResponse: (status, body) => {
        if (status !== 200) sample(`identify ${status} ${body}`);
      },
    },
    {
      method: 'POST',
      setupRequest: (req, ctx) => {
        const t = tx(ctx);
        ctx.t0 = performance.now();
        return {
          ...req,
          path: `${base}/${t.id}/password`,
          headers: { ...json, 'x-transaction-token': t.token },
          body: JSON.stringify({ password: PASSWORD }),
        };
      },
      onResponse: (status, body, ctx) => {
        login.lat.push(performance.now() - (ctx.t0 as number));
        const ok =
          status === 200 &&
          (() => {
            const j = JSON.parse(body) as { status?: string; redirect_to?: string };
            return (
              j.status === 'completed' && typeof j.redirect_to === 'string' && j.redirect_to.includes('code=')
            );
          })();
        if (ok) login.done++;
        else {
          if (status >= 200 && status < 300) login.unexpected++;
          sample(`password ${status} ${body}`);
        }
      },
    },
  ];
}

// ---- form scenario: token endpoint and introspection ---------------------------------------------

const formInput = (): { auths: string[]; bodies: string[] } => {
  if (!spec.formFile) return { auths: [], bodies: [] };
  const f = JSON.parse(readFileSync(spec.formFile, 'utf8')) as { auths?: string[]; bodies?: string[] };
  return { auths: f.auths ?? [], bodies: f.bodies ?? [] };
};

const form = {
  ok: 0,
  unexpected: 0,
  active: 0,
  inactive: 0,
  allowed: 0,
  denied: 0,
  next: 0,
  lat: [] as number[],
};
const countOf = (body: string, needle: string): number => body.split(needle).length - 1;

/** The next form request, taking the inputs' authorizations and bodies in turn. */
function nextFormRequest(input: { auths: string[]; bodies: string[] }): PacedRequest {
  const i = form.next++;
  const headers: Record<string, string> = {
    'content-type': spec.contentType ?? 'application/x-www-form-urlencoded',
  };
  if (input.auths.length > 0) headers.authorization = input.auths[i % input.auths.length] as string;
  return { path: spec.path ?? '/', headers, body: input.bodies[i % input.bodies.length] as string };
}

/** Counts one form answer: a non-2xx is sampled, a 2xx body is checked against spec.expect. */
function checkFormAnswer(status: number, body: string): void {
  if (status < 200 || status >= 300) {
    sample(`${status} ${body}`);
    return;
  }
  // Cheap checks (the load generator shares its core with PostgreSQL): our JSON and the
  // peer's both start with the member checked.
  let good: boolean;
  if (spec.expect === 'active') {
    good = /^\{\s*"active"\s*:\s*true/.test(body);
    if (good) form.active++;
    else form.inactive++;
  } else if (spec.expect === 'decision') {
    good = body.includes('"decision_id":"dec_') && !body.includes('EVALUATION_ERROR');
    form.allowed += countOf(body, '"allowed":true');
    form.denied += countOf(body, '"allowed":false');
  } else {
    good = body.includes('"access_token":"');
  }
  if (good) form.ok++;
  else {
    form.unexpected++;
    sample(`${status} ${body}`);
  }
}

function formRequests(): Request[] {
  const input = formInput();
  if (input.bodies.length === 0) throw new Error('form: no bodies');
  return [
    {
      method: 'POST',
      setupRequest: (req, ctx) => {
        ctx.t0 = performance.now();
        return { ...req, ...nextFormRequest(input) };
      },
      onResponse: (status, body, ctx) => {
        if (spec.expect === 'decision') form.lat.push(performance.now() - (ctx.t0 as number));
        checkFormAnswer(status, body);
      },
    },
  ];
}

// ---- codeflow scenario: sign-in and code redemption ------------------------------------------------

const flow = { done: 0, unexpected: 0, lat: [] as number[] };

function codeflowRequests(): Request[] {
  const { auths } = formInput();
  const auth = auths[0];
  if (!auth) throw new Error('codeflow: no client credentials');
  const steps = loginRequests();
  const start = steps[0] as Request;
  const password = steps[2] as Request;
  return [
    {
      ...start,
      setupRequest: (req, ctx) => {
        ctx.flowT0 = performance.now();
        ctx.code = undefined;
        return req;
      },
    },
    steps[1] as Request,
    {
      ...password,
      onResponse: (status, body, ctx) => {
        if (status !== 200) {
          sample(`password ${status} ${body}`);
          return;
        }
        const j = JSON.parse(body) as { status?: string; redirect_to?: string };
        const code =
          j.status === 'completed' && typeof j.redirect_to === 'string'
            ? new URL(j.redirect_to).searchParams.get('code')
            : null;
        if (code) ctx.code = code;
        else {
          flow.unexpected++;
          sample(`password ${status} ${body}`);
        }
      },
    },
    {
      method: 'POST',
      setupRequest: (req, ctx) => ({
        ...req,
        path: `/realms/${REALM}/oauth/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: String(ctx.code ?? 'missing'),
          redirect_uri: LOGIN_REDIRECT,
          code_verifier: PKCE_VERIFIER,
        }).toString(),
      }),
      onResponse: (status, body, ctx) => {
        const ok = status === 200 && body.includes('"access_token":"') && body.includes('"id_token":"');
        if (ok) {
          flow.done++;
          flow.lat.push(performance.now() - (ctx.flowT0 as number));
        } else {
          if (status >= 200 && status < 300) flow.unexpected++;
          sample(`token ${status} ${body}`);
        }
      },
    },
  ];
}

// ---- run -------------------------------------------------------------------------------------------

const serverPids = spec.serverPids ?? [];
const dbPids = spec.dbPid ? [spec.dbPid] : [];
const s0 = treeTicks(serverPids);
const mainTicks = () => serverPids.map((p) => threadTicks(p)).reduce((a, b) => a + b, 0);
const st0 = mainTicks();
const th0 = serverPids.length ? threadsOf(serverPids[0] as number) : new Map();
const d0 = treeTicks(dbPids);
const m0 = machineTicks();
const c0 = process.cpuUsage();
const t0 = performance.now();

const requests =
  spec.kind === 'login'
    ? loginRequests()
    : spec.kind === 'form'
      ? formRequests()
      : spec.kind === 'codeflow'
        ? codeflowRequests()
        : null;
// A fixed rate is paced evenly (paced.ts): autocannon's rate limit sends in bursts.
const paced = spec.rate !== undefined && spec.kind === 'form';
const r = paced
  ? await pacedForm(spec.rate as number)
  : await autocannon({
      url: `${spec.base}${spec.kind === 'get' ? (spec.path ?? '/') : ''}`,
      connections: spec.c,
      duration: spec.d,
      timeout: 30,
      ...(spec.rate ? { overallRate: spec.rate } : {}),
      ...(requests ? { requests } : {}),
    });

/** The form scenario at a fixed rate, its latency counted from each request's due time. */
async function pacedForm(rate: number) {
  const input = formInput();
  if (input.bodies.length === 0) throw new Error('form: no bodies');
  const result = await pacedRun({
    base: spec.base,
    connections: spec.c,
    seconds: spec.d,
    rate,
    next: () => nextFormRequest(input),
    onResponse: checkFormAnswer,
  });
  form.lat = result.latencies;
  return result;
}

const wall = (performance.now() - t0) / 1000;
const c1 = process.cpuUsage(c0);
const m1 = machineTicks();
const serverCores = (treeTicks(serverPids) - s0) / HZ / wall;
const serverMainCores = (mainTicks() - st0) / HZ / wall;
const th1 = serverPids.length ? threadsOf(serverPids[0] as number) : new Map();
const serverThreads = [...th1.entries()]
  .map(([tid, t]) => {
    const b = th0.get(tid) ?? { user: 0, sys: 0 };
    return {
      tid,
      main: tid === serverPids[0],
      user: (t.user - b.user) / HZ / wall,
      sys: (t.sys - b.sys) / HZ / wall,
    };
  })
  .filter((t) => t.main || t.user + t.sys >= 0.005)
  .sort((a, b) => Number(b.main) - Number(a.main) || b.user + b.sys - (a.user + a.sys))
  .map((t) => ({ ...t, user: +t.user.toFixed(3), sys: +t.sys.toFixed(3) }));
const dbCores = (treeTicks(dbPids) - d0) / HZ / wall;
const genCores = (c1.user + c1.system) / 1e6 / wall;
const boxCores = ((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * NCPU;

const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
const httpTotal = Object.values(statusCodes).reduce((a, b) => a + b, 0);
let lat: { p50: number; p90: number; p99: number; max: number };
let reqS: number;
let reqTotal: number;
if (spec.kind === 'login' || spec.kind === 'codeflow') {
  const src = spec.kind === 'login' ? login : flow;
  const sorted = src.lat.sort((a, b) => a - b);
  lat = {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
  reqTotal = src.done;
  reqS = src.done / wall;
} else {
  lat = { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max };
  reqTotal = httpTotal;
  reqS = r.requests.average;
}
const round = (x: number, n = 2) => +x.toFixed(n);
const result: LtResult = {
  label: spec.label,
  kind: spec.kind,
  c: spec.c,
  d: spec.d,
  wall_s: round(wall),
  req_s: round(reqS, 1),
  req_total: reqTotal,
  http_total: httpTotal,
  http_req_s: round(httpTotal / wall, 1),
  lat_p50_ms: round(lat.p50, 1),
  lat_p90_ms: round(lat.p90, 1),
  lat_p99_ms: round(lat.p99, 1),
  lat_max_ms: round(lat.max, 1),
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
  unexpected:
    spec.kind === 'login'
      ? login.unexpected
      : spec.kind === 'codeflow'
        ? flow.unexpected
        : spec.kind === 'form'
          ? form.unexpected
          : 0,
  ...(spec.kind === 'form' && spec.expect === 'active'
    ? { active: form.active, inactive: form.inactive }
    : {}),
  ...(spec.kind === 'form' && spec.expect === 'decision'
    ? {
        allowed: form.allowed,
        denied: form.denied,
        lat_p95_ms: round(
          percentile(
            form.lat.sort((a, b) => a - b),
            95,
          ),
          2,
        ),
      }
    : {}),
  status_codes: statusCodes,
  unexpected_samples: samples,
  server_cores: round(serverCores),
  server_main_cores: round(serverMainCores),
  server_threads: serverThreads,
  db_cores: dbPids.length ? round(dbCores) : null,
  loadgen_cores: round(genCores),
  box_busy_cores: round(boxCores),
  foreign_cores: round(Math.max(0, boxCores - serverCores - genCores - (dbPids.length ? dbCores : 0))),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
