// A realm's brand (docs/login-ui.md, "Branding"): the interaction members validated one by one,
// the public branding answer, the uploaded logo (sniffed PNG/JPEG/WebP, size-limited, served
// with its own type and nosniff, audited) and who may change it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { TINY_PNG } from '../../harness/login-ui-kit.ts';

type Json = Record<string, unknown>;
type Ctx = Parameters<typeof startHarness>[0];

async function setup(t: Ctx) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const branding = async () => {
    const res = await h.get(`/api/v1/realms/${realm.name}/branding`);
    assert.equal(res.status, 200);
    return (await res.json()) as Json;
  };
  return { h, realm, admin, branding };
}

const fieldsOf = async (res: Response) =>
  ((await res.json()) as { errors: { field: string; code: string }[] }).errors.map(
    (e) => `${e.field}:${e.code}`,
  );

describe('branding', () => {
  test('case=each interaction member is checked and named in the problem', async (t) => {
    const { admin } = await setup(t);
    const res = await admin.call('PUT', '/settings', {
      policy: {
        interaction: {
          display_name: 'Acme\u0007',
          primary_color: 'red',
          support_contact: 'javascript:alert(1)',
        },
      },
    });
    assert.equal(res.status, 422);
    assert.deepEqual((await fieldsOf(res)).sort(), [
      'policy.interaction.display_name:pattern',
      'policy.interaction.primary_color:pattern',
      'policy.interaction.support_contact:pattern',
    ]);
    for (const contact of ['http://help.example.com', 'https://u:p@help.example.com/', 'not an address'])
      assert.equal(
        (await admin.call('PUT', '/settings', { policy: { interaction: { support_contact: contact } } }))
          .status,
        422,
        contact,
      );
  });

  test('case=the public answer: the realm name until branded, then the policy members', async (t) => {
    const { h, realm, admin, branding } = await setup(t);
    assert.deepEqual(await branding(), {
      display_name: realm.display_name,
      primary_color: null,
      support_contact: null,
      logo_url: null,
    });
    const put = await admin.call('PUT', '/settings', {
      policy: {
        interaction: {
          display_name: 'Acme Shop',
          primary_color: '#0a7d4f',
          support_contact: 'help@acme.example',
        },
      },
    });
    assert.equal(put.status, 200, JSON.stringify(await put.clone().json()));
    const brand = await branding();
    assert.equal(brand.display_name, 'Acme Shop');
    assert.equal(brand.primary_color, '#0a7d4f');
    assert.equal(brand.support_contact, 'help@acme.example');
    const missing = await h.get('/api/v1/realms/no-such-realm/branding');
    assert.equal(missing.status, 404);
  });

  test('case=a PNG logo is stored, served with its type and nosniff, removed, audited', async (t) => {
    const { h, realm, admin, branding } = await setup(t);
    const up = await admin.call('PUT', '/branding/logo', { image: TINY_PNG.toString('base64') });
    assert.equal(up.status, 200, JSON.stringify(await up.clone().json()));
    const logoUrl = (await branding()).logo_url;
    assert.match(String(logoUrl), new RegExp(`^/api/v1/realms/${realm.name}/branding/logo\\?v=`));
    const logo = await h.get(String(logoUrl));
    assert.equal(logo.status, 200);
    assert.equal(logo.headers.get('content-type'), 'image/png');
    assert.equal(logo.headers.get('x-content-type-options'), 'nosniff');
    assert.match(logo.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.deepEqual(Buffer.from(await logo.arrayBuffer()), TINY_PNG);
    const etag = logo.headers.get('etag') ?? '';
    assert.equal((await h.get(String(logoUrl), { headers: { 'if-none-match': etag } })).status, 304);
    const audits = await h.ctx.db.query<{ type: string; signal: string }>(
      `select type, signal from audit_events where realm_id = $1 and type like 'realm.logo.%' order by occurred_at`,
      [realm.id],
    );
    assert.deepEqual(audits.rows, [{ type: 'realm.logo.updated', signal: 'configuration_change' }]);
    assert.equal((await admin.call('DELETE', '/branding/logo')).status, 204);
    assert.equal((await branding()).logo_url, null);
    assert.equal((await h.get(`/api/v1/realms/${realm.name}/branding/logo`)).status, 404);
    assert.equal((await admin.call('DELETE', '/branding/logo')).status, 404);
  });

  test('case=SVG, HTML and oversized images are refused with a problem naming image', async (t) => {
    const { h, realm, admin } = await setup(t);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const html = Buffer.from('<html><script>alert(1)</script></html>');
    for (const body of [svg, html]) {
      const res = await admin.call('PUT', '/branding/logo', { image: body.toString('base64') });
      assert.equal(res.status, 422);
      assert.deepEqual(await fieldsOf(res), ['image:unsupported_type']);
    }
    const big = Buffer.concat([TINY_PNG, Buffer.alloc(128 * 1024)]);
    const tooBig = await admin.call('PUT', '/branding/logo', { image: big.toString('base64') });
    assert.equal(tooBig.status, 422);
    assert.deepEqual(await fieldsOf(tooBig), ['image:too_long']);
    assert.equal(
      (await h.ctx.db.query('select 1 from realm_logos where realm_id = $1', [realm.id])).rows.length,
      0,
      'nothing stored',
    );
  });

  test('case=changing the logo needs realm.settings.write', async (t) => {
    const { h, realm } = await setup(t);
    const reader = await apiCaller(h, realm, { roles: [] });
    const res = await reader.call('PUT', '/branding/logo', { image: TINY_PNG.toString('base64') });
    assert.equal(res.status, 403);
  });
});
