// The transaction API (spec doc 1, "Endpoints: Authorization and sign-in transactions"):
// headless start, state read, and one POST per step.
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { adminAudience } from '../kernel/audiences.ts';
import { array, integer, object, optional, refusedAsBadRequest, string } from '../platform/http/decode.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { runStep, type StepResponse } from './advance.ts';
import { resolveOrRefuse } from './authorization-request.ts';
import type { CallCredentials } from './binding.ts';
import {
  FEDERATION_COOKIE,
  federationCookie,
  REMEMBERED_DEVICE_COOKIE,
  rememberedDeviceCookie,
  SESSION_COOKIE,
  sessionCookie,
  TX_COOKIE,
  txCookie,
} from './cookies.ts';
import { createTransaction } from './create.ts';
import { claimDeviceAuthorization, spendUserCodeAttempt, validateDeviceStart } from './device-start.ts';
import { loadFacts } from './facts.ts';
import { evaluate } from './next-actions.ts';
import { readState } from './read-state.ts';
import { validateStart } from './start.ts';
import { useStartBodyReader } from './start-body.ts';
import { StartReads } from './start-reads.ts';
import { presentState } from './state.ts';
import { STEPS } from './steps/index.ts';

const text = (maxBytes = 2048) => optional(string({ maxBytes }));

// Lengths of login_hint, ui_locales and the user agent are cut rather than refused (spec doc 1,
// start-field length handling); the generous caps here only bound the body. The start is the
// authorization request in JSON: every parameter it refuses is 400 invalid_request, as at the
// authorization endpoint (RFC 6749 section 4.1.2.1; spec doc 1, Errors: unsupported response_mode).
const decodeStart = refusedAsBadRequest(
  object({
    client_id: string({ minLength: 1, maxLength: 128 }),
    // Optional for a start from a pushed request (request_uri); validateStart requires them otherwise.
    redirect_uri: optional(string({ minLength: 1, maxBytes: 2048 })),
    scope: text(),
    resource: optional(array(string({ minLength: 1, maxBytes: 2048 }), { maxItems: 50 })),
    state: text(),
    nonce: text(),
    code_challenge: optional(string({ minLength: 1, maxLength: 128 })),
    code_challenge_method: optional(string({ minLength: 1, maxLength: 16 })),
    organization: text(128),
    login_hint: text(8192),
    ui_locales: text(8192),
    intent: text(32),
    prompt: text(256),
    max_age: optional(integer({ min: 0 })),
    acr_values: text(),
    claims: text(16384),
    request_uri: text(),
    device_user_code: text(64),
    response_mode: text(32),
  }),
);

export function credentialsOf(req: FastifyRequest): CallCredentials {
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : null;
  };
  return {
    cookie: req.cookies?.[TX_COOKIE] ?? null,
    continuationToken: header('x-transaction-token'),
    origin: header('origin'),
    csrfToken: header('x-csrf-token'),
    mutating: req.method !== 'GET' && req.method !== 'HEAD',
    clientIp: req.clientAddress,
    rememberedDevice: req.cookies?.[REMEMBERED_DEVICE_COOKIE] ?? header('x-remembered-device'),
    clientCertificate: req.clientCertificate,
  };
}

export function registerSigninRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const publicOrigin = ctx.config.server.publicOrigin;
  app.register(cookie);

  // The start route reads its body with the start-field rules (start-body.ts), so it lives in a
  // scope of its own.
  app.register(async (scope) => {
    useStartBodyReader(scope);
    scope.post<{ Params: { realm: string } }>(
      '/api/v1/realms/:realm/auth/transactions',
      async (req, reply) => {
        const body = decodeStart(req.body ?? {});
        const realm = await findRequestedRealm(ctx, req.params.realm);
        if (!realm) throw problem.notFound('no such realm');
        const ua = req.headers['user-agent'];
        // intent device: the person typed a device's user code (device-start.ts).
        const device = body.intent === 'device';
        if (device) await spendUserCodeAttempt(ctx, req.clientAddress);
        const result = await ctx.db.tx(async (q) => {
          const input = { ...body, ...(typeof ua === 'string' ? { userAgent: ua } : {}) };
          const deviceStart = device ? await validateDeviceStart(ctx, q, realm, input) : null;
          const reads = new StartReads(q, realm.id);
          const started = deviceStart
            ? ({ ok: true, params: deviceStart.params } as const)
            : await validateStart(
                q,
                realm,
                await resolveOrRefuse(ctx, q, realm, input, reads),
                'headless',
                ctx.config.server.publicOrigin,
                ctx.grantTypeControls,
                reads,
              );
          if (!started.ok)
            throw new Problem(400, 'invalid_request', started.failure.detail, {
              error: started.failure.error,
            });
          const created = await createTransaction(ctx, q, realm, started.params, 'headless', String(req.id));
          if (deviceStart)
            await claimDeviceAuthorization(q, realm.id, deviceStart.deviceAuthorizationId, created.tx.id);
          const policy = await reads.policy();
          const facts = await loadFacts(q, created.tx, {
            config: ctx.config,
            client: started.params.client,
            policy,
            adminAudience: adminAudience(ctx.config.server.publicOrigin, realm.name),
            now: ctx.clock.now(),
            certificatePresented: req.clientCertificate !== null,
          });
          return { created, clientName: started.params.client.name, evaluation: evaluate(created.tx, facts) };
        });
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({
            transaction_id: result.created.tx.id,
            continuation_token: result.created.secret,
            state: presentState({
              tx: result.created.tx,
              clientName: result.clientName,
              evaluation: result.evaluation,
              user: null,
            }),
          });
      },
    );
  });

  app.get<{ Params: { realm: string; id: string } }>(
    '/api/v1/realms/:realm/auth/transactions/:id',
    async (req, reply) => {
      const state = await readState(ctx, req.params.realm, req.params.id, credentialsOf(req));
      return reply.header('cache-control', 'no-store').send(state);
    },
  );

  const send = (
    req: FastifyRequest<{ Params: { realm: string; id: string } }>,
    reply: FastifyReply,
    r: StepResponse,
  ) => {
    const { realm, id } = req.params;
    if (r.clearTxCookie) {
      reply.clearCookie(TX_COOKIE, txCookie(publicOrigin, realm, id));
    }
    if (r.sessionCookie) {
      reply.setCookie(SESSION_COOKIE, r.sessionCookie.value, {
        ...sessionCookie(publicOrigin, realm),
        ...(r.sessionCookie.maxAgeSeconds !== null ? { maxAge: r.sessionCookie.maxAgeSeconds } : {}),
      });
    }
    if (r.federationCookie) {
      reply.setCookie(FEDERATION_COOKIE, r.federationCookie, federationCookie(publicOrigin, realm));
    }
    if (r.deviceCookie) {
      reply.setCookie(REMEMBERED_DEVICE_COOKIE, r.deviceCookie.value, {
        ...rememberedDeviceCookie(publicOrigin, realm),
        maxAge: r.deviceCookie.maxAgeSeconds,
      });
    }
    return reply.header('cache-control', 'no-store').send(r.body);
  };

  for (const step of STEPS) {
    app.post<{ Params: { realm: string; id: string } }>(
      `/api/v1/realms/:realm/auth/transactions/:id/${step.path}`,
      async (req, reply) => {
        const r = await runStep(
          ctx,
          req.params.realm,
          req.params.id,
          credentialsOf(req),
          step,
          req.body,
          String(req.id),
        );
        return send(req, reply, r);
      },
    );
  }
}
