// The SCIM filter grammar (RFC 7644 §3.4.2.2) and its bounds (spec doc 2, Limits: SCIM).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ScimError } from './scim-error.ts';
import { parseFilter, parsePatchPath } from './scim-filter.ts';
import { matches } from './scim-filter-eval.ts';

const alice = {
  id: 'usr_1',
  userName: 'Alice@Contoso.com',
  externalId: 'E-1',
  active: true,
  name: { givenName: 'Alice', familyName: 'Liddell' },
  emails: [
    { value: 'alice@contoso.com', type: 'work', primary: true },
    { value: 'a@home.example', type: 'home' },
  ],
  meta: { lastModified: '2026-11-01T00:00:00.000Z' },
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Sales', employeeNumber: '42' },
};

const scimTypeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof ScimError ? e.scimType : 'not a ScimError';
  }
  return 'no error';
};

describe('SCIM filters', () => {
  const cases: [string, boolean][] = [
    ['userName eq "alice@contoso.com"', true],
    ['USERNAME EQ "ALICE@CONTOSO.COM"', true],
    ['externalId eq "e-1"', false],
    ['externalId eq "E-1"', true],
    ['name.familyName sw "Lid" and active eq true', true],
    ['emails[type eq "work" and value co "contoso"]', true],
    ['emails[type eq "other"]', false],
    ['emails.value ew "home.example"', true],
    ['not (active eq true) or title pr', false],
    ['title pr', false],
    ['(userName eq "x" or userName eq "y") or name.givenName ne "Bob"', true],
    ['meta.lastModified gt "2026-10-01T00:00:00Z"', true],
    ['meta.lastModified lt "2026-10-01T00:00:00Z"', false],
    ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "sales"', true],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName sw "alice"', true],
    ['userName eq "a" or userName eq "b" and active eq false', false],
  ];
  for (const [text, expected] of cases)
    test(`case=${text}`, () => assert.equal(matches(alice, parseFilter(text)), expected));

  test('case=and binds tighter than or', () => {
    assert.deepEqual(parseFilter('a pr or b pr and c pr'), {
      op: 'or',
      left: { op: 'pr', path: { schema: null, attr: 'a', sub: null } },
      right: {
        op: 'and',
        left: { op: 'pr', path: { schema: null, attr: 'b', sub: null } },
        right: { op: 'pr', path: { schema: null, attr: 'c', sub: null } },
      },
    });
  });

  test('case=malformed filters are invalidFilter', () => {
    for (const bad of [
      '',
      'userName',
      'userName eq',
      'userName xx "a"',
      'userName eq "a',
      '(userName eq "a"',
      'userName eq "a")',
      'userName eq "a" and',
      'emails[type eq "work"',
      'emails[type[x eq 1] eq "w"]',
      'userName eq bareword',
      'active gt true',
      'userName = "a"',
    ])
      assert.equal(
        scimTypeOf(() => matches(alice, parseFilter(bad))),
        'invalidFilter',
        bad,
      );
  });

  test('case=at most 1024 bytes and 64 nodes', () => {
    const within = `userName eq "${'a'.repeat(1024 - 14)}"`;
    assert.equal(Buffer.byteLength(within), 1024);
    assert.doesNotThrow(() => parseFilter(within));
    assert.equal(
      scimTypeOf(() => parseFilter(`userName eq "${'a'.repeat(1024 - 13)}"`)),
      'invalidFilter',
    );
    // n comparisons joined by or make 2n - 1 nodes.
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `a eq ${i}`).join(' or ');
    assert.doesNotThrow(() => parseFilter(terms(32)));
    assert.equal(
      scimTypeOf(() => parseFilter(terms(33))),
      'invalidFilter',
    );
  });

  test('case=PATCH paths', () => {
    assert.deepEqual(parsePatchPath('name.givenName'), {
      path: { schema: null, attr: 'name', sub: 'givenName' },
      filter: null,
      sub: null,
    });
    const p = parsePatchPath('emails[type eq "work"].value');
    assert.equal(p.sub, 'value');
    assert.equal(p.path.attr, 'emails');
    assert.equal(
      parsePatchPath('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager').path.schema,
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
    );
    for (const bad of ['emails[type eq', 'a..b', 'emails[type eq "w"]x', '[x eq 1]'])
      assert.equal(
        scimTypeOf(() => parsePatchPath(bad)),
        'invalidPath',
        bad,
      );
  });
});
