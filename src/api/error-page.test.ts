import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Problem } from '../platform/http/problem.ts';
import { renderErrorPage, wantsHtml } from './error-page.ts';

test('a browser navigation wants the page; an API caller or a wildcard gets the problem document', () => {
  const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';
  assert.equal(wantsHtml(browser), true);
  assert.equal(wantsHtml('text/html'), true);
  for (const accept of [
    undefined,
    '',
    '*/*',
    'application/json',
    'text/html, application/json',
    'application/problem+json',
    'text/html;q=0',
  ])
    assert.equal(wantsHtml(accept), false, String(accept));
});

test('every value on the page is escaped; the problem code, error and request id are shown', () => {
  const p = new Problem(400, 'invalid_request', 'redirect_uri <b>"x"</b> & more', {
    error: 'invalid_request',
  });
  const html = renderErrorPage(p, '<script>alert(1)</script>', 'en', 'authorize');
  assert.ok(!html.includes('<script>') && !html.includes('<b>'));
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /redirect_uri &lt;b&gt;&quot;x&quot;&lt;\/b&gt; &amp; more/);
  assert.match(html, /<code>invalid_request<\/code>/);
  assert.match(html, /<html lang="en">/);
  const de = renderErrorPage(new Problem(404, 'not_found', 'no such realm'), 'r-1', 'de', 'logout');
  assert.match(de, /<html lang="de">/);
  assert.match(de, /Diese Adresse gibt es nicht/);
  assert.match(de, /Fehler bei der Abmeldung/);
});
