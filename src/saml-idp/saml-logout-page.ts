// The front-channel single logout page (docs/saml-idp.md, Single logout): hidden frames load each
// SAML service provider's signed LogoutRequest, then the browser goes on to `next` (or the page
// says it is done). A frame that never loads holds nobody up past a few seconds.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { escapeHtml, sendHtmlPage } from './saml-html.ts';

const SCRIPT = `(function(){var b=document.body,n=b.getAttribute('data-next'),f=document.getElementsByTagName('iframe'),left=f.length,over=false;
function done(){if(over)return;over=true;if(n){location.replace(n);}else{document.getElementById('m').textContent='You are signed out.';}}
for(var i=0;i<f.length;i++){f[i].addEventListener('load',function(){if(--left<=0)done();});}
setTimeout(done,5000);})();`;
const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

export function sendLogoutPage(reply: FastifyReply, frames: string[], next: string | null) {
  const origins = [...new Set(frames.map((u) => new URL(u).origin))];
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Signing out</title></head>
<body${next === null ? '' : ` data-next="${escapeHtml(next)}"`}><p id="m">Signing out\u2026</p>
${frames.map((u) => `<iframe hidden title="sign-out" src="${escapeHtml(u)}"></iframe>`).join('\n')}
${next === null ? '' : `<noscript><a href="${escapeHtml(next)}">Continue</a></noscript>`}
<script>${SCRIPT}</script></body></html>`;
  return sendHtmlPage(
    reply,
    html,
    `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; frame-src ${origins.join(' ')}; frame-ancestors 'none'`,
  );
}
