// Shared setup of the hook tests: the usual sign-in realm with the 'web-app' client, an
// administrator, a real HTTP receiver on loopback that answers as each test says (reached as an IP
// literal through the operator allowlist 127.0.0.1/32, as the webhook tests reach theirs), and a
// "dead" server that accepts connections and never answers.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret } from '../../harness/token-kit.ts';
import { type Json, json, type Receiver, startReceiver } from '../webhooks/webhook-kit.ts';

export type { Json };

export async function hookSetup(t: TestContext) {
  const s = await signinSetup(t, {
    overrides: { 'delivery.egress_allowlist': '127.0.0.1/32', 'security.min_auth_response': '0s' },
  });
  const admin = await apiCaller(s.h, s.realm);
  const receiver = await startReceiver(t);
  const secret = await clientSecret(s.h, s.realm, s.client);
  return { ...s, admin, receiver, creds: { clientId: 'web-app', secret } };
}

export type HookSetup = Awaited<ReturnType<typeof hookSetup>>;

/** The receiver's address as an IP literal: what the hook is registered with. */
export const receiverUrl = (r: Receiver, path = '/hook') => `http://127.0.0.1:${r.port}${path}`;

/** Answers every call with this JSON body and status 200. */
export function answerWith(r: Receiver, body: unknown): void {
  r.answer = (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };
}

export async function createHook(admin: ApiCallerKit, body: Json): Promise<Json> {
  const res = await admin.call('POST', '/hooks', {
    name: 'test hook',
    allow_private_network: true,
    client_ids: ['web-app'],
    ...body,
  });
  const out = await json(res);
  assert.equal(res.status, 201, JSON.stringify(out));
  return out;
}

/** A server that takes connections and never answers; closed after the test. */
export async function startDeadServer(t: TestContext): Promise<{ url: string; connections: () => number }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((ok) => server.close(ok));
  });
  return { url: `http://127.0.0.1:${port}/never`, connections: () => sockets.length };
}

/** The receiver's own check of a signature (the Standard Webhooks scheme), not the service's code. */
export function signatureValid(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = String(headers['webhook-id']);
  const ts = String(headers['webhook-timestamp']);
  const expected = `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
  return String(headers['webhook-signature']).split(' ').includes(expected);
}

/** The value of service_hook_calls_total{kind,outcome}, 0 when the series does not exist. */
export async function hookCalls(s: HookSetup, kind: string, outcome: string): Promise<number> {
  const text = await (await s.h.internal('/metrics')).text();
  const m = text.match(
    new RegExp(`^service_hook_calls_total\\{kind="${kind}",outcome="${outcome}"\\} (\\d+)$`, 'm'),
  );
  return m ? Number(m[1]) : 0;
}
