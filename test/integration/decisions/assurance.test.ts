// acrSatisfies (docs/authorization.md, evaluation step 5): the service's acr values rank basic <
// mfa < phishing_resistant; an unknown value satisfies only itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acrSatisfies } from '../../../src/decisions/assurance.ts';

test('acr values satisfy themselves and every weaker one', () => {
  const cases: [string | null, string, boolean][] = [
    ['phishing_resistant', 'phishing_resistant', true],
    ['phishing_resistant', 'mfa', true],
    ['mfa', 'phishing_resistant', false],
    ['mfa', 'mfa', true],
    ['basic', 'mfa', false],
    [null, 'basic', false],
    ['basic', '', true],
    ['urn:example:loa:3', 'urn:example:loa:3', true],
    ['phishing_resistant', 'urn:example:loa:3', false],
  ];
  for (const [token, required, expected] of cases)
    assert.equal(acrSatisfies(token, required), expected, `${token} for ${required}`);
});
