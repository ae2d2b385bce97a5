import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickUiLocale } from './ui-locales.ts';

test('ui_locales first, then Accept-Language by quality, else English', () => {
  const table: [string | null, string | null, string][] = [
    ['de', 'en', 'de'],
    ['fr de-AT', null, 'de'],
    ['fr', 'fr, de;q=0.8, en;q=0.5', 'de'],
    [null, 'en;q=0.4, de;q=0.9', 'de'],
    [null, 'de;q=0, en', 'en'],
    [null, 'de-CH', 'de'],
    [null, 'fr, *;q=0.1', 'en'],
    [null, 'de;q=garbage', 'de'],
    [null, null, 'en'],
    ['', '', 'en'],
  ];
  for (const [ui, accept, want] of table) assert.equal(pickUiLocale(ui, accept), want, `${ui} / ${accept}`);
});
