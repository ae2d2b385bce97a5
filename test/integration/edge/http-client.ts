// Small HTTP clients for edge tests. fetch hides or refuses much of what these tests must send
// (control characters in headers, huge header sections, chunked or truncated bodies, a fresh
// connection per request), so requests here go through node:http or a raw socket, always with a
// deadline so that no test can hang on a server that never answers.
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string | number | string[]>;
  body?: string | Buffer;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** One request on its own connection (no agent, no keep-alive), answered or failed within a deadline. */
export function send(url: string, path: string, opts: SendOptions = {}): Promise<Answer> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, url), {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      agent: false,
      timeout: timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.end(opts.body);
  });
}

/** POST with a JSON content type unless the caller gives another (or none, with `null`). */
export function postJson(
  url: string,
  path: string,
  body: string | Buffer,
  contentType: string | null = 'application/json',
): Promise<Answer> {
  return send(url, path, {
    method: 'POST',
    headers: contentType === null ? {} : { 'content-type': contentType },
    body,
  });
}

/**
 * Writes `parts` to a fresh TCP connection, with a pause between parts when asked, and reads the
 * answer until the server closes the connection or `timeoutMs` passes (then it fails).
 * Requests should carry `Connection: close`.
 */
export function rawExchange(
  url: string,
  parts: (string | Buffer)[],
  opts: { timeoutMs?: number; endAfterWrite?: boolean } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`raw exchange got no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (e) => {
      // A reset after the server answered still leaves a readable answer.
      if (chunks.length === 0) {
        clearTimeout(timer);
        reject(e);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (e) {
        reject(e);
      }
    });
    socket.on('connect', () => {
      for (const p of parts) socket.write(p);
      if (opts.endAfterWrite) socket.end();
    });
  });
}

function parseResponse(raw: Buffer): Answer {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no HTTP response head in ${JSON.stringify(raw.toString().slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: IncomingHttpHeaders = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(split + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  return { status, headers, text: body.toString() };
}

function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(body.subarray(at, eol).toString(), 16);
    if (!size) break;
    out.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** An HTTP/1.1 request head (with `Connection: close`) as bytes, header values written as given. */
export function requestHead(
  method: string,
  path: string,
  host: string,
  headers: [string, string | Buffer][] = [],
): Buffer {
  const parts: Buffer[] = [
    Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n`),
  ];
  for (const [name, value] of headers) {
    parts.push(
      Buffer.from(`${name}: `),
      Buffer.isBuffer(value) ? value : Buffer.from(value),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: { field: string; code: string; detail?: string }[];
  [member: string]: unknown;
}

const mediaType = (h: string | string[] | undefined): string =>
  String(h ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();

/** Asserts an RFC 9457 problem answer with this status and code, and returns its body. */
export function assertProblem(res: Answer, status: number, code: string): ProblemBody {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  assert.equal(mediaType(res.headers['content-type']), 'application/problem+json');
  const body = JSON.parse(res.text) as ProblemBody;
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.type, `urn:proudauth:problem:${code}`);
  assert.equal(typeof body.title, 'string');
  assert.ok(body.title.length > 0, 'problem title is empty');
  return body;
}

/** The JSON body of a non-problem answer, after checking status and media type. */
export function assertJson(res: Answer, status: number): unknown {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  assert.equal(mediaType(res.headers['content-type']), 'application/json');
  return JSON.parse(res.text);
}

/** Retries `probe` until it returns true, failing after `timeoutMs`. */
export async function eventually(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > until) assert.fail(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A promise to hold requests in flight, released from the test (and always in t.after). */
export class Latch {
  private release!: () => void;
  readonly promise: Promise<void> = new Promise((r) => {
    this.release = r;
  });
  open(): void {
    this.release();
  }
}
