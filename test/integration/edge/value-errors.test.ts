// The error split of every strict JSON body (docs/decisions.md, Error split; spec doc 1, Errors):
// a value of the right type that breaks a rule is 422 validation_failed naming the member. This
// walks Fastify's route table: for every route that takes a JSON body it learns the decoder the
// route uses (observeBodyDecoding) and, from the decoder's spec, sends one body per member with
// that member out of range. Routes whose bodies are read by hand are listed with a body of their
// own; a new route that is neither reached nor listed fails the walk.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { routeTable } from '../../../src/platform/http/app.ts';
import { type Decoder, observeBodyDecoding } from '../../../src/platform/http/decode.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { basic, clientSecret } from '../../harness/token-kit.ts';
import { valueErrorCases } from '../../harness/value-errors.ts';

type Json = Record<string, unknown>;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const PREFIX = '/api/v1/realms/:realm';

/** Id prefixes of the service (kernel newId), tried in turn for a path parameter. */
const ID_PREFIXES = [
  'usr',
  'arc',
  'org',
  'rol',
  'grp',
  'prj',
  'spr',
  'sgr',
  'whk',
  'whd',
  'job',
  'alh',
  'aev',
  'inv',
  'jrq',
  'mem',
  'pkc',
  'ses',
  'cli',
  'res',
  'dec',
  'idf',
  'otr',
  'ras',
  'rdv',
  'wta',
  'wac',
  'aud',
  'idp',
  'lid',
  'fxt',
  'iat',
  'wfl',
  'hok',
  'plg',
  'plv',
];

/**
 * Value rules checked by hand rather than by a decoder's spec: a body breaking one rule, the status
 * the spec gives it, and the name the answer uses for the member (`errors[].field`, or
 * `errors[].path` in a configuration plan).
 */
const HAND_CHECKED: { route: string; body: Json; status: number; names: string }[] = [
  // A configuration document answers with its plan (spec doc 1, Endpoints: Configuration).
  {
    route: 'POST /configuration/validate',
    body: { expected_policy_revision: -1 },
    status: 200,
    names: '/expected_policy_revision',
  },
  {
    route: 'POST /configuration/imports',
    body: { expected_policy_revision: -1 },
    status: 422,
    names: '/expected_policy_revision',
  },
  {
    route: 'PUT /settings',
    body: { policy: { audit: { retention_days: 99999 } } },
    status: 422,
    names: 'policy.audit.retention_days',
  },
  { route: 'POST /registrations', body: { transaction_id: '' }, status: 422, names: 'transaction_id' },
  {
    route: 'POST /authorization/check-batch',
    body: { checks: Array.from({ length: 101 }, () => ({})) },
    status: 422,
    names: 'checks',
  },
  {
    route: 'POST /authorization/tuples',
    body: {
      writes: Array.from({ length: 101 }, (_, i) => ({
        object_type: 'doc',
        object_id: `d${i}`,
        relation: 'viewer',
        subject_type: 'user',
        subject_id: 'u',
      })),
    },
    status: 422,
    names: 'writes',
  },
];

/**
 * Routes whose bodies are read by hand, each checked in HAND_CHECKED: a configuration document
 * (its own plan errors), and registration outside the transaction path, whose decoder is the
 * registration step's (walked at /auth/transactions/:id/registration).
 */
const HAND_READ = new Set([
  'POST /configuration/validate',
  'POST /configuration/imports',
  'POST /registrations',
]);

/**
 * Routes without a JSON body whose query carries values with rules: a value breaking one rule and
 * the status and problem code the spec gives it (document 1, Errors: an invalid cursor is 400).
 */
const QUERY_CHECKED: { route: string; query: string; status: number; code: string }[] = [
  { route: 'GET /session-events', query: 'wait=26', status: 400, code: 'invalid_request' },
  { route: 'GET /session-events', query: 'wait=-1', status: 400, code: 'invalid_request' },
  { route: 'GET /session-events', query: 'wait=2.5', status: 400, code: 'invalid_request' },
  { route: 'GET /session-events', query: 'cursor=not-a-cursor', status: 400, code: 'invalid_request' },
  { route: 'GET /session-events', query: 'limit=10', status: 400, code: 'invalid_request' },
];

/**
 * Protocol routes outside the administration API whose values are walked too: dynamic client
 * registration (RFC 7591/7592, bodies read by hand and refused in RFC 7591's own form) and the
 * Shared Signals stream endpoints (decoders, answered like the API). A new route under these
 * prefixes that the walk does not know fails it.
 */
const PROTOCOL = /^\/realms\/:realm\/(oauth\/register|ssf\/)/;
const REGISTER = '/realms/:realm/oauth/register';
const REGISTRATION_MEMBERS = [
  'redirect_uris',
  'post_logout_redirect_uris',
  'token_endpoint_auth_method',
  'application_type',
  'grant_types',
  'response_types',
  'scope',
  'client_name',
  'client_uri',
  'logo_uri',
  'tos_uri',
  'policy_uri',
  'contacts',
  'software_id',
  'software_version',
  'jwks',
  'backchannel_logout_uri',
  'backchannel_logout_session_required',
] as const;
const LIST_MEMBERS = new Set([
  'redirect_uris',
  'post_logout_redirect_uris',
  'grant_types',
  'response_types',
  'contacts',
]);
const OVERSIZE = 'a'.repeat(5000);
const CONTROL = 'https://walk.example.com/\u0001cb';
/** Per member: a wrong JSON type, an oversize value and one with a control character. */
function malformedMetadata(member: string): unknown[] {
  const list = LIST_MEMBERS.has(member);
  return [
    7,
    list ? 'https://walk.example.com/cb' : ['x'],
    { nested: true },
    list ? [OVERSIZE] : OVERSIZE,
    list ? [CONTROL] : CONTROL,
  ];
}
/** A value of each JSON type; a member is sent every one its decoder does not take. */
const ANY_TYPE: { kinds: string[]; value: unknown }[] = [
  { kinds: ['number'], value: 7 },
  { kinds: ['string', 'enum', 'literal'], value: 'text' },
  { kinds: ['array'], value: ['x'] },
  { kinds: ['object', 'record', 'json'], value: { nested: true } },
  { kinds: ['boolean'], value: true },
];
/** Whole bodies of the wrong JSON type. */
const WRONG_BODIES: unknown[] = [[], 'text', 7, true];
/** Path ids no client has: control characters, NUL, too long, not ASCII, a path step. */
const BAD_CLIENT_IDS = ['%01', '%00', 'a'.repeat(200), '%C3%A4', 'a%2Fb', 'dcr-%20x'];
/** Query values of stream_id that name no stream or are malformed. */
const BAD_STREAM_QUERIES: { query: string; status: number }[] = [
  { query: 'stream_id=%01', status: 404 },
  { query: `stream_id=${'a'.repeat(300)}`, status: 404 },
  { query: 'stream_id=', status: 400 },
  { query: 'stream_id=a&stream_id=b', status: 400 },
  { query: 'other=1', status: 400 },
];

/** Objects the routes' path parameters name, created for real: some routes load before decoding. */
async function seedObjects(h: Harness, realm: { id: string; name: string }, admin: ApiCallerKit) {
  const created = async (path: string, body: Json): Promise<string> => {
    const res = await admin.call('POST', path, body);
    const answer = (await res.json()) as Json;
    assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(answer)}`);
    return String(answer.id);
  };
  const realmRow = realm as Parameters<typeof seedOrganization>[1];
  const user = await h.createUser(realmRow, { email: 'walked@example.com', password: 'correct-horse-9' });
  const org = await seedOrganization(h, realmRow);
  const client = await h.createClient(realmRow, {
    clientId: 'walk-client',
    name: 'Walk',
    type: 'web',
    redirectUris: ['https://walk.example.com/cb'],
  });
  return {
    user: user.id,
    org,
    membership: await seedMembership(h, realmRow, org, user.id),
    client: client.client_id,
    project: await created('/projects', { name: 'walk' }),
    orgProject: await created(`/organizations/${org}/projects`, { name: 'walk' }),
    group: await created('/groups', { name: 'walk' }),
    orgGroup: await created(`/organizations/${org}/groups`, { name: 'walk' }),
    principal: await created('/service-principals', { name: 'walk' }),
    orgRole: await created(`/organizations/${org}/roles`, { name: 'walk' }),
    legalHold: await created('/audit-legal-holds', { reason: 'walking the routes' }),
  };
}

interface Walked {
  route: string;
  decoder: Decoder<unknown> | null;
  status: number;
}

describe('edge › value errors of every JSON body', () => {
  const observed: Decoder<unknown>[] = [];
  observeBodyDecoding((d) => observed.push(d));
  after(() => observeBodyDecoding(null));

  test('case=a value out of range is 422 naming the member, on every route', async (t) => {
    const h = await startHarness(t, { overrides: { 'security.min_auth_response': '0s' } });
    const realm = await h.createRealm();
    const admin = await apiCaller(h, realm);
    const account = await apiCaller(h, realm, { audience: 'account' });
    const routes = routeTable(h.publicApp).filter(
      (r) => BODY_METHODS.has(r.method) && r.url.startsWith(`${PREFIX}/`),
    );
    assert.ok(routes.length > 80, `only ${routes.length} routes with bodies`);

    const send = async (method: string, path: string, body: unknown) => {
      const caller = path.startsWith('/me') ? account : admin;
      if (path.startsWith('/auth/transactions') || path === '/registrations') {
        return h.get(`/api/v1/realms/${realm.name}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      }
      return caller.call(method, path, body);
    };

    const objects = await seedObjects(h, realm, admin);
    const fake = (prefix: string) => `${prefix}_${'0'.repeat(22)}walk`;
    /** A path parameter's value: a real object where one was made, else a well-formed id. */
    function param(url: string, name: string, id: string): string {
      const inOrg = url.includes('/organizations/:org/');
      const ids: Record<string, string> = {
        user: objects.user,
        org: objects.org,
        membership: objects.membership,
        client: objects.client,
        project: inOrg ? objects.orgProject : objects.project,
        group: inOrg ? objects.orgGroup : objects.group,
        role: inOrg ? objects.orgRole : fake('rol'),
        subject_type: 'user',
        subject_id: objects.user,
      };
      if (name === 'id' && url.includes('/service-principals/')) return objects.principal;
      if (name === 'id' && url.includes('/audit-legal-holds/')) return objects.legalHold;
      return ids[name] ?? id;
    }

    /** Reaches the route's decoder with a body of the wrong shape, trying id prefixes for `:id`. */
    async function reach(method: string, url: string): Promise<Walked & { path: string }> {
      const route = `${method} ${url}`;
      const rest = url.slice(PREFIX.length);
      const candidates = rest.includes(':') ? ID_PREFIXES.map(fake) : [''];
      let last = 0;
      for (const id of candidates) {
        const path = rest.replace(/:([a-z_]+)/g, (_m, name: string) =>
          encodeURIComponent(param(url, name, id)),
        );
        observed.length = 0;
        const res = await send(method, path, { walk_probe: 1 });
        last = res.status;
        await res.body?.cancel();
        if (observed.length > 0) return { route, path, decoder: observed[0] ?? null, status: last };
      }
      return { route, path: '', decoder: null, status: last };
    }

    const unreached: string[] = [];
    const wrong: string[] = [];
    let checked = 0;
    for (const r of routes) {
      const route = `${r.method} ${r.url.slice(PREFIX.length)}`;
      if (HAND_READ.has(route)) continue;
      // SCIM answers bad values as RFC 7644 errors (400 invalidValue), for a connector's token
      // only; test/integration/scim walks each of its bodies (docs/scim.md).
      if (route.includes(' /scim/v2/')) continue;
      const walked = await reach(r.method, r.url);
      if (!walked.decoder) {
        unreached.push(`${route} (answered ${walked.status})`);
        continue;
      }
      for (const c of valueErrorCases(walked.decoder)) {
        const res = await send(r.method, walked.path, c.body);
        const body = (await res.json()) as Json;
        const fields = ((body.errors as { field: string; code: string }[] | undefined) ?? []).map(
          (e) => e.field,
        );
        if (res.status !== c.status || !fields.includes(c.field))
          wrong.push(
            `${route} ${JSON.stringify(c.body).slice(0, 80)}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`,
          );
        checked++;
      }
    }
    for (const c of HAND_CHECKED) {
      const [method = '', path = ''] = c.route.split(' ');
      const res = await send(method, path, c.body);
      const text = await res.text();
      if (res.status !== c.status || !text.includes(`"${c.names}"`))
        wrong.push(`${c.route}: ${res.status} ${text.slice(0, 300)}`);
      checked++;
    }
    assert.deepEqual(wrong, [], 'bodies answered other than the error split says');
    assert.deepEqual(unreached, [], 'routes whose body decoder the walk did not reach');
    assert.ok(checked > 100, `only ${checked} bodies checked`);
  });

  test('case=a query value out of range is a problem with the spec code, on every listed route', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const admin = await apiCaller(h, realm);
    const known = new Set(
      routeTable(h.publicApp)
        .filter((r) => r.url.startsWith(`${PREFIX}/`))
        .map((r) => `${r.method} ${r.url.slice(PREFIX.length)}`),
    );
    const wrong: string[] = [];
    for (const c of QUERY_CHECKED) {
      const [method = '', path = ''] = c.route.split(' ');
      if (!known.has(c.route)) {
        wrong.push(`${c.route}: no such route`);
        continue;
      }
      const res = await admin.call(method, `${path}?${c.query}`);
      const body = (await res.json()) as Json;
      if (res.status !== c.status || body.code !== c.code)
        wrong.push(`${c.route}?${c.query}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
  });

  test('case=registration and Shared Signals routes answer malformed values with their error, never 500', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, {
      client_registration: { enabled: true },
      shared_signals: { enabled: true },
    });
    const admin = await apiCaller(h, realm);
    const iatRes = await admin.call('POST', '/initial-access-tokens', { max_uses: 1000 });
    const iat = String(((await iatRes.json()) as Json).token);
    const ssfClient = await h.createClient(realm, {
      clientId: 'walk-ssf',
      name: 'Walk SSF',
      type: 'web',
      redirectUris: ['https://walk.example.com/cb'],
    });
    const ssfAuth = basic('walk-ssf', await clientSecret(h, realm, ssfClient));
    const base = `/realms/${realm.name}`;
    const request = (method: string, path: string, auth: string, body?: unknown) =>
      h.get(`${base}${path}`, {
        method,
        headers: {
          authorization: auth,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    // Every registration, refused or not, spends the network's hourly budget first (document 2,
    // Limits); the walk sends more than it allows, so its counters are reset between requests.
    const register = async (body: unknown) => {
      await h.ctx.db.query(`delete from abuse_counters where bucket like 'dcr:%'`);
      return request('POST', '/oauth/register', `Bearer ${iat}`, body);
    };
    const created = await register({ redirect_uris: ['https://walk.example.com/cb'] });
    const client = (await created.json()) as Json;
    assert.equal(created.status, 201, JSON.stringify(client));
    const clientId = String(client.client_id);
    const rat = `Bearer ${String(client.registration_access_token)}`;
    const registeredBefore = await h.ctx.db.query(
      'select count(*)::int as n from clients where realm_id = $1',
      [realm.id],
    );

    const routes = routeTable(h.publicApp)
      .filter((r) => r.method !== 'HEAD' && PROTOCOL.test(r.url))
      .map((r) => `${r.method} ${r.url}`);
    const walked = new Set<string>();
    const wrong: string[] = [];
    let checked = 0;
    /** One malformed request: the status it must get and the member its answer must name. */
    const expect = async (route: string, res: Response, status: number, field?: string) => {
      walked.add(route);
      checked++;
      const text = await res.text();
      let body: Json = {};
      try {
        body = JSON.parse(text) as Json;
      } catch {
        body = {};
      }
      const fields = ((body.errors as { field: string }[] | undefined) ?? []).map((e) => e.field);
      const named = field === undefined || fields.some((f) => f === field || f.startsWith(`${field}[`));
      if (res.status !== status || typeof body.code !== 'string' || !named)
        wrong.push(`${route} (${status}${field ? ` ${field}` : ''}): ${res.status} ${text.slice(0, 200)}`);
    };

    // RFC 7591: each member of the wrong type, oversize or with a control character is 400
    // invalid_client_metadata (invalid_redirect_uri for redirect URIs) naming it; so is a body
    // that is no object. PUT (RFC 7592) reads the same metadata with the client's own client_id.
    for (const member of REGISTRATION_MEMBERS)
      for (const value of malformedMetadata(member)) {
        const body = { redirect_uris: ['https://walk.example.com/cb'], [member]: value };
        await expect(`POST ${REGISTER}`, await register(body), 400, member);
        const put = await request('PUT', `/oauth/register/${clientId}`, rat, {
          ...body,
          client_id: clientId,
        });
        await expect(`PUT ${REGISTER}/:client`, put, 400, member);
      }
    for (const body of WRONG_BODIES) {
      await expect(`POST ${REGISTER}`, await register(body), 400);
      await expect(
        `PUT ${REGISTER}/:client`,
        await request('PUT', `/oauth/register/${clientId}`, rat, body),
        400,
      );
    }
    for (const value of [7, ['x'], '\u0001', OVERSIZE]) {
      const put = await request('PUT', `/oauth/register/${clientId}`, rat, {
        redirect_uris: ['https://walk.example.com/cb'],
        client_id: value,
      });
      await expect(`PUT ${REGISTER}/:client`, put, 400, 'client_id');
    }
    // RFC 7592: an id no client has is the same 401 as a wrong token, whatever it is made of.
    for (const id of BAD_CLIENT_IDS)
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const body =
          method === 'PUT' ? { client_id: id, redirect_uris: ['https://walk.example.com/cb'] } : undefined;
        await expect(
          `${method} ${REGISTER}/:client`,
          await request(method, `/oauth/register/${id}`, rat, body),
          401,
        );
      }

    // Shared Signals: the decoders' value rules (422 naming the member), every member of a wrong
    // JSON type and bodies of the wrong type (400), and malformed stream_id queries.
    const ssfRoutes = routeTable(h.publicApp).filter(
      (x) => x.method !== 'HEAD' && x.url.startsWith('/realms/:realm/ssf/'),
    );
    for (const r of ssfRoutes) {
      const route = `${r.method} ${r.url}`;
      const path = r.url.slice('/realms/:realm'.length);
      if (!BODY_METHODS.has(r.method)) {
        for (const q of BAD_STREAM_QUERIES)
          await expect(route, await request(r.method, `${path}?${q.query}`, ssfAuth), q.status);
        continue;
      }
      const decoders: Decoder<unknown>[] = [];
      observeBodyDecoding((d) => decoders.push(d));
      await (await request(r.method, path, ssfAuth, { walk_probe: 1 })).body?.cancel();
      observeBodyDecoding(null);
      const decoder = decoders[0];
      if (decoder?.spec.kind !== 'object') {
        wrong.push(`${route}: no body decoder reached`);
        continue;
      }
      for (const c of valueErrorCases(decoder))
        await expect(route, await request(r.method, path, ssfAuth, c.body), c.status, c.field);
      for (const [member, d] of decoder.spec.members)
        for (const { kinds, value } of ANY_TYPE)
          if (!kinds.includes(d.spec.kind))
            await expect(route, await request(r.method, path, ssfAuth, { [member]: value }), 400, member);
      for (const body of WRONG_BODIES) await expect(route, await request(r.method, path, ssfAuth, body), 400);
    }

    const after = await h.ctx.db.query('select count(*)::int as n from clients where realm_id = $1', [
      realm.id,
    ]);
    assert.deepEqual(after.rows, registeredBefore.rows, 'no malformed registration made a client');
    assert.deepEqual(wrong, [], 'malformed values answered other than with their error');
    assert.deepEqual(
      routes.filter((r) => !walked.has(r)),
      [],
      'protocol routes the walk does not cover',
    );
    assert.ok(checked > 200, `only ${checked} requests checked`);
  });
});
