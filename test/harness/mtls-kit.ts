// Mutual TLS for tests (docs/oauth-mtls.md): a mutual-TLS listener of the harness's own routes, and
// an undici fetch that presents a client certificate to it.
import type { FastifyInstance } from 'fastify';
import { Agent, fetch as undiciFetch } from 'undici';
import { buildPublicApp } from '../../src/main/http-server.ts';
import type { Harness } from './harness.ts';
import type { TestCertificate } from './mtls-certs.ts';

export { selfSignedCertificate, type TestCertificate } from './mtls-certs.ts';

/** The harness's public routes on a mutual-TLS listener; closed when the test ends. */
export async function startMtlsListener(
  t: { after(fn: () => Promise<void>): void },
  h: Harness,
  server: TestCertificate,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = buildPublicApp(h.ctx, { cert: Buffer.from(server.certPem), key: Buffer.from(server.keyPem) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  const a = app.server.address();
  if (!a || typeof a === 'string') throw new Error('not listening');
  return { app, url: `https://127.0.0.1:${a.port}` };
}

/** A fetch to the mutual-TLS listener trusting `server`, presenting `client` when given. */
export function mtlsFetch(
  t: { after(fn: () => Promise<void>): void },
  server: TestCertificate,
  client?: TestCertificate,
): typeof fetch {
  const agent = new Agent({
    connect: { ca: server.certPem, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) },
  });
  t.after(() => agent.close());
  // undici's own Response is the same class global fetch returns on Node 20, under another type.
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
}

/** RFC 9440 Client-Cert header value of a certificate. */
export const clientCertHeader = (c: TestCertificate): string => `:${c.der.toString('base64')}:`;
