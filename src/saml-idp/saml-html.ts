// The small HTML pages SAML answers with in the browser (the HTTP-POST form, the single logout
// page): never cached, no referrer, under the page's own Content Security Policy.
import type { FastifyReply } from 'fastify';

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const sendHtmlPage = (reply: FastifyReply, html: string, csp: string) =>
  reply
    .code(200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', csp)
    .send(html);
