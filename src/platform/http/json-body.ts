// The only body parser the service has: strict JSON (spec doc 1, decoding rules; decision
// D10). Fastify's own parsers are removed so no other media type is ever accepted by accident.
import type { FastifyInstance } from 'fastify';
import { problem } from './problem.ts';
import { parseStrictJson } from './strict-json.ts';

// Fastify matches the media type but ignores its parameters, so the charset is checked here.
export function checkCharset(contentType: string | undefined): void {
  const params = (contentType ?? '').split(';').slice(1);
  for (const p of params) {
    const [name, value] = p.split('=').map((s) => s.trim().toLowerCase());
    if (name === 'charset' && value !== 'utf-8' && value !== '"utf-8"') {
      throw problem.unsupportedMediaType('only the utf-8 charset is accepted');
    }
  }
}

export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      checkCharset(req.headers['content-type']);
      // A zero-length body is no body, as for a request without Content-Type: routes that take
      // none (POST /data-exports) accept it, the others refuse the missing body as usual.
      done(null, (body as Buffer).length === 0 ? undefined : parseStrictJson(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}
