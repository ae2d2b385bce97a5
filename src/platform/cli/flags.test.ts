import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FlagError, type FlagSpec, parseFlags } from './flags.ts';

const spec: FlagSpec = {
  since: { type: 'string' },
  out: { type: 'string', default: 'revocation.ndjson' },
  'invalidate-all-sessions': { type: 'bool' },
  status: { type: 'bool' },
  limit: { type: 'int', default: 100 },
  input: { type: 'list' },
};

describe('parseFlags', () => {
  test('case=defaults when no flag is given', () => {
    assert.deepEqual(parseFlags([], spec), {
      flags: {
        out: 'revocation.ndjson',
        'invalidate-all-sessions': false,
        status: false,
        limit: 100,
        input: [],
      },
      rest: [],
    });
  });

  const valueForms: [string, string[]][] = [
    ['-since x', ['-since', 'x']],
    ['-since=x', ['-since=x']],
    ['--since x', ['--since', 'x']],
    ['--since=x', ['--since=x']],
  ];
  for (const [label, argv] of valueForms) {
    test(`case=string flag as ${label}`, () => assert.equal(parseFlags(argv, spec).flags.since, 'x'));
  }

  test('case=the spec example, one and two dashes mixed', () => {
    const argv = ['-since', '2026-11-01T00:00:00Z', '-out=log.ndjson', '--invalidate-all-sessions', 'extra'];
    const { flags, rest } = parseFlags(argv, spec);
    assert.equal(flags.since, '2026-11-01T00:00:00Z');
    assert.equal(flags.out, 'log.ndjson');
    assert.equal(flags['invalidate-all-sessions'], true);
    assert.deepEqual(rest, ['extra']);
  });

  test('case=bool flags take no separate value but accept =false', () => {
    assert.deepEqual(parseFlags(['-status', 'pos'], spec).rest, ['pos']);
    assert.equal(parseFlags(['-status=false'], spec).flags.status, false);
    assert.equal(parseFlags(['--status=true'], spec).flags.status, true);
    assert.throws(() => parseFlags(['-status=maybe'], spec), FlagError);
  });

  test('case=int flags parse and refuse non-integers', () => {
    assert.equal(parseFlags(['-limit', '-5'], spec).flags.limit, -5);
    assert.equal(parseFlags(['--limit=7'], spec).flags.limit, 7);
    assert.throws(() => parseFlags(['-limit', '1.5'], spec), /invalid value "1.5" for flag --limit/);
  });

  test('case=list flags repeat', () => {
    assert.deepEqual(parseFlags(['--input', 'a', '-input=b', '--input', 'c'], spec).flags.input, [
      'a',
      'b',
      'c',
    ]);
    const withDefault: FlagSpec = { tag: { type: 'list', default: ['d'] } };
    assert.deepEqual(parseFlags([], withDefault).flags.tag, ['d']);
    assert.deepEqual(parseFlags(['-tag', 'x', '-tag', 'y'], withDefault).flags.tag, ['x', 'y']);
  });

  test('case=positional arguments before and after flags, and after --', () => {
    const { flags, rest } = parseFlags(
      ['auth0', '-since', 'x', 'file.json', '--', '-status', '--since'],
      spec,
    );
    assert.equal(flags.since, 'x');
    assert.equal(flags.status, false);
    assert.deepEqual(rest, ['auth0', 'file.json', '-status', '--since']);
  });

  test('case=a lone dash is positional', () => assert.deepEqual(parseFlags(['-'], spec).rest, ['-']));

  test('case=unknown flag and missing value are errors', () => {
    assert.throws(() => parseFlags(['-x'], spec), { name: 'FlagError', message: 'unknown flag --x' });
    assert.throws(() => parseFlags(['--nope=1'], spec), { message: 'unknown flag --nope' });
    assert.throws(() => parseFlags(['-since'], spec), { message: 'flag --since needs a value' });
    assert.throws(() => parseFlags(['---since', 'x'], spec), /bad flag syntax/);
  });
});
