// HTTP edge of signing-key administration (spec doc 2, "Keys and emergency controls"; docs/keys.md):
// POST /signing-key-rotations (realm.keys.rotate, a person's MFA session, authentication within
// 5 minutes) and GET /signing-keys (metadata only, never key material).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, enumOf, object, optional, string } from '../platform/http/decode.ts';
import { Problem } from '../platform/http/problem.ts';
import { SIGNING_ALGORITHMS } from './jws.ts';
import { type RotationRequest, rotateSigningKey } from './signing-key-rotation.service.ts';
import { listSigningKeys, type SigningKeyRow } from './signing-keys.repo.ts';

/** Spec doc 2, Authentication 2: signing-key rotation needs authentication within 5 minutes. */
export const ROTATION_RECENT_AUTH_MS = 5 * 60_000;

const ROTATE = {
  audience: 'admin',
  permissions: ['realm.keys.rotate'],
  sessionRequired: true,
  recentAuthWithinMs: ROTATION_RECENT_AUTH_MS,
} as const;
// Key metadata is part of the realm's settings; reading it changes nothing (docs/decisions.md).
const READ = { audience: 'admin', permissions: ['realm.settings.read'] } as const;

const rotationBody = object({
  mode: enumOf(['planned', 'emergency'] as const),
  reason: string({ minLength: 1, maxLength: 500, pattern: /[^\p{Cc}]+/u }),
  algorithm: optional(enumOf(SIGNING_ALGORITHMS)),
});

function decodeRotation(body: unknown, defaultAlgorithm: RotationRequest['algorithm']): RotationRequest {
  const r = decodeBody(rotationBody, body);
  return { mode: r.mode, reason: r.reason, algorithm: r.algorithm ?? defaultAlgorithm };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const presentSigningKey = (k: SigningKeyRow) => ({
  kid: k.kid,
  algorithm: k.algorithm,
  state: k.state,
  created_at: iso(k.created_at),
  activated_at: iso(k.activated_at),
  retiring_at: iso(k.retiring_at),
  publish_until: iso(k.publish_until),
  retired_at: iso(k.retired_at),
  compromised_at: iso(k.compromised_at),
});

export function registerSigningKeyRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/signing-key-rotations', ROTATE, async ({ req, reply, realm, call }) => {
    const request = decodeRotation(req.body, ctx.config.keys.signingAlgorithm);
    if (!ctx.keyring) throw new Problem(503, 'temporarily_unavailable', 'no root key is configured');
    const result = await rotateSigningKey(
      {
        db: ctx.db,
        keyring: ctx.keyring,
        timings: { ...ctx.config.keys, maxAccessTokenTtlMs: ctx.config.tokens.maxAccessTokenTtlMs },
      },
      call,
      request,
    );
    // This process publishes the new key, and stops accepting a compromised one, at once; others
    // follow within the key-set cache time.
    ctx.keyStore.forgetKeySet(realm.name);
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({
        mode: result.mode,
        new_kid: result.key.kid,
        previous_kid: result.previousKid,
        previous_key_compromised: result.previousKeyCompromised,
        key: presentSigningKey(result.key),
      });
  });

  apiRoute(app, ctx, 'GET', '/signing-keys', READ, async ({ realm }) => ({
    items: (await listSigningKeys(ctx.db, realm.id)).map(presentSigningKey),
  }));
}
