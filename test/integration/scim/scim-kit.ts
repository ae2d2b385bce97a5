// A SCIM client for the tests: a connector created through the administration API, and requests
// sent with its bearer token the way Entra ID and Okta send them (application/scim+json).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Clock } from '../../../src/platform/clock.ts';
import { type Body, setup } from '../roles/roles-kit.ts';

export interface ScimReply {
  status: number;
  body: Body;
  headers: Headers;
}

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export async function scimSetup(t: TestContext, clock?: Clock) {
  const s = await setup(t, clock);
  const created = await s.api('POST', '/scim-connectors', { name: 'Entra ID' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const token = created.body.token as string;
  const scim = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    bearer = token,
  ): Promise<ScimReply> => {
    const url = `/api/v1/realms/${s.realm.name}/scim/v2${path}`;
    const init = {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        accept: 'application/scim+json',
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    };
    // After a long pause (a bulk insert) a kept-alive socket the server has just closed may be
    // reused: a GET is sent again once on a fresh connection.
    const res = await s.h.get(url, init).catch((e: Error & { cause?: { code?: string } }) => {
      if (method !== 'GET' || e.cause?.code !== 'ECONNRESET') throw e;
      return s.h.get(url, init);
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  return { ...s, connector: created.body, token, scim };
}

/** A SCIM error document with this status and scimType, in the SCIM media type. */
export function assertScimError(r: ScimReply, status: number, scimType?: string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.match(r.headers.get('content-type') ?? '', /^application\/scim\+json/);
  assert.deepEqual(r.body.schemas, [ERROR]);
  assert.equal(r.body.status, String(status));
  if (scimType !== undefined) assert.equal(r.body.scimType, scimType);
}

/** A user as Entra ID's provisioning service creates one (its documented POST /Users request). */
export const entraUser = (n: string | number) => ({
  schemas: [USER, ENTERPRISE],
  externalId: `0a21f0f2-8d2a-4f8e-bf98-7363c4aed4e${n}`,
  userName: `Test_User_${n}@testuser.com`,
  active: true,
  emails: [{ primary: true, type: 'work', value: `Test_User_${n}@testuser.com` }],
  meta: { resourceType: 'User' },
  name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
  roles: [],
  [ENTERPRISE]: { employeeNumber: `E${n}`, department: 'Engineering', manager: { value: 'usr_manager' } },
});

/** A user as Okta creates one (its documented SCIM 2.0 POST /Users request). */
export const oktaUser = (n: string | number) => ({
  schemas: [USER],
  userName: `okta.user${n}@example.com`,
  name: { givenName: 'Okta', familyName: `User${n}` },
  emails: [{ primary: true, value: `okta.user${n}@example.com`, type: 'work' }],
  displayName: `Okta User${n}`,
  locale: 'en-US',
  externalId: `00u${n}`,
  groups: [],
  password: 'correct-horse-battery-staple-9',
  active: true,
});
