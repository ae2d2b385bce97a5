import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseStrictJson } from '../platform/http/strict-json.ts';
import {
  defaultSubjectTypes,
  type GrantSpec,
  grantProblems,
  grantUnchanged,
  parseGrantSpec,
} from './grant-spec.ts';

const parse = (text: string) => parseGrantSpec(parseStrictJson(text));

describe('parseGrantSpec', () => {
  const accepted: [string, GrantSpec][] = [
    ['[]', { scopes: [] }],
    ['["orders:read","orders:write"]', { scopes: ['orders:read', 'orders:write'] }],
    ['{}', { scopes: [] }],
    ['{"scopes":["a"]}', { scopes: ['a'] }],
    ['{"SCOPES":["a"],"Subject_Types":["user","robot"]}', { scopes: ['a'], subjectTypes: ['user', 'robot'] }],
    ['{"scopes":["a"],"subject_types":null,"exchange_policy":null}', { scopes: ['a'] }],
    [
      '{"scopes":[],"exchange_policy":{"accept_from_audiences":["urn:example:a"]}}',
      { scopes: [], exchangePolicy: { acceptFromAudiences: ['urn:example:a'], maxScopes: [] } },
    ],
    [
      '{"exchange_policy":{"max_scopes":["a"]}}',
      { scopes: [], exchangePolicy: { acceptFromAudiences: [], maxScopes: ['a'] } },
    ],
  ];
  for (const [text, expected] of accepted) {
    test(`case=accepts ${text}`, () => {
      const r = parse(text);
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepEqual({ ...r.value }, expected);
    });
  }

  const refused: [string, string][] = [
    ['"orders:read"', ':type'],
    ['42', ':type'],
    ['["a b"]', '[0]:pattern'],
    ['["a","a"]', '[1]:duplicate'],
    ['[""]', '[0]:pattern'],
    [`["${'x'.repeat(129)}"]`, '[0]:pattern'],
    ['["a\\\\b"]', '[0]:pattern'],
    ['[1]', '[0]:type'],
    ['{"allowed_scopes":["a"]}', 'allowed_scopes:unknown_member'],
    ['{"scopes":"a"}', 'scopes:type'],
    ['{"subject_types":[""]}', 'subject_types[0]:too_short'],
    ['{"subject_types":["user","user"]}', 'subject_types[1]:duplicate'],
    ['{"exchange_policy":{"audiences":[]}}', 'exchange_policy.audiences:unknown_member'],
    ['{"exchange_policy":{"max_scopes":["a b"]}}', 'exchange_policy.max_scopes[0]:pattern'],
    ['{"exchange_policy":[]}', 'exchange_policy:type'],
  ];
  for (const [text, expected] of refused) {
    test(`case=refuses ${text.slice(0, 40)}`, () => {
      const r = parse(text);
      assert.equal(r.ok, false);
      if (!r.ok)
        assert.ok(
          r.errors.some((e) => `${e.field}:${e.code}` === expected),
          r.errors.map((e) => `${e.field}:${e.code}`).join(', '),
        );
    });
  }
});

describe('grantProblems', () => {
  const ctx = {
    declaredScopes: new Set(['read', 'write']),
    realmAudiences: new Set(['urn:example:a', 'https://id.example.com/api/v1/realms/r']),
  };
  const cases: [string, Parameters<typeof grantProblems>[0], string[]][] = [
    ['declared scopes', { scopes: ['read', 'write'] }, []],
    ['no scopes', { scopes: [] }, []],
    ['an undeclared scope', { scopes: ['read', 'delete'] }, ['scopes[1]:undeclared_scope']],
    [
      'a valid exchange policy',
      { scopes: [], exchangePolicy: { acceptFromAudiences: ['urn:example:a'], maxScopes: ['read'] } },
      [],
    ],
    [
      'exchange max scope undeclared',
      { scopes: [], exchangePolicy: { acceptFromAudiences: [], maxScopes: ['admin'] } },
      ['exchange_policy.max_scopes[0]:undeclared_scope'],
    ],
    [
      'exchange audience foreign',
      { scopes: [], exchangePolicy: { acceptFromAudiences: ['urn:example:b'], maxScopes: [] } },
      ['exchange_policy.accept_from_audiences[0]:unknown_audience'],
    ],
  ];
  for (const [label, grant, expected] of cases) {
    test(`case=${label}`, () => {
      assert.deepEqual(
        grantProblems(grant, ctx).map((e) => `${e.field}:${e.code}`),
        expected,
      );
    });
  }

  test('case=names the scope list as the caller asks', () => {
    assert.deepEqual(
      grantProblems({ scopes: ['x'] }, ctx, 'allowed_scopes').map((e) => e.field),
      ['allowed_scopes[0]'],
    );
  });
});

describe('defaultSubjectTypes', () => {
  for (const [type, expected] of [
    ['service', ['service_principal']],
    ['web', ['user']],
    ['spa', ['user']],
    ['native', ['user']],
    ['device', ['user']],
  ] as const) {
    test(`case=${type}`, () => assert.deepEqual(defaultSubjectTypes(type), expected));
  }
});

describe('grantUnchanged', () => {
  const stored = {
    allowedScopes: ['a', 'b'],
    subjectTypes: ['user'],
    exchangePolicy: { acceptFromAudiences: ['urn:example:x'], maxScopes: ['a'] },
  };
  const cases: [string, GrantSpec, boolean][] = [
    ['same scopes in another order', { scopes: ['b', 'a'] }, true],
    ['a scope more', { scopes: ['a', 'b', 'c'] }, false],
    ['same subject types', { scopes: ['a', 'b'], subjectTypes: ['user'] }, true],
    ['other subject types', { scopes: ['a', 'b'], subjectTypes: ['service_principal'] }, false],
    [
      'same exchange policy',
      { scopes: ['a', 'b'], exchangePolicy: { acceptFromAudiences: ['urn:example:x'], maxScopes: ['a'] } },
      true,
    ],
    [
      'other exchange policy',
      { scopes: ['a', 'b'], exchangePolicy: { acceptFromAudiences: [], maxScopes: ['a'] } },
      false,
    ],
  ];
  for (const [label, spec, expected] of cases) {
    test(`case=${label}`, () => assert.equal(grantUnchanged(spec, stored), expected));
  }
  test('case=a stored grant without an exchange policy differs from one given', () => {
    assert.equal(
      grantUnchanged(
        { scopes: [], exchangePolicy: { acceptFromAudiences: [], maxScopes: [] } },
        { allowedScopes: [], subjectTypes: ['user'], exchangePolicy: null },
      ),
      false,
    );
  });
});
