// Every answer a test receives from a route declared with a response schema is checked against
// that schema (docs/openapi.md), so the OpenAPI document cannot drift from what the service
// answers. The check sits in the app's onSend hook and records each mismatch; the harness throws
// the first one at the request that got it and fails the test at its end if any was missed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ProblemSchema } from '../../src/platform/http/route-schema.ts';

type Json = Record<string, unknown>;
type Checker = ReturnType<typeof Compile>;

// Compiled once per schema object, shared by every harness of the test process.
const compiled = new WeakMap<object, Checker>();

function checkerFor(schema: TSchema): Checker {
  let c = compiled.get(schema);
  if (!c) {
    // The shared schemas a route refers to by $id (openapi.ts adds them to the app).
    c = Compile({ Problem: ProblemSchema }, schema);
    compiled.set(schema, c);
  }
  return c;
}

/** The declared schema for an answer: by status, then by media type when the route names one. */
function schemaFor(responses: Json, status: number, contentType: string): TSchema | null | undefined {
  const entry = (responses[status] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default) as
    | Json
    | undefined;
  if (!entry) return undefined;
  const content = entry.content as Record<string, { schema: TSchema }> | undefined;
  if (!content) return entry as TSchema;
  const media = contentType.split(';')[0]?.trim() ?? '';
  return content[media]?.schema ?? null;
}

export interface Conformance {
  /** Mismatches not yet reported. */
  take(): string[];
}

/** Hooks the check into an app (before it listens); a route without response schemas is skipped. */
export function checkResponses(app: FastifyInstance): Conformance {
  const pending: string[] = [];
  app.addHook('onSend', (req: FastifyRequest, reply, payload, done) => {
    const responses = (req.routeOptions.schema as Json | undefined)?.response as Json | undefined;
    if (responses) {
      const problem = mismatch(
        responses,
        reply.statusCode,
        String(reply.getHeader('content-type') ?? ''),
        payload,
      );
      if (problem)
        pending.push(`${req.method} ${req.routeOptions.url} answered ${reply.statusCode}: ${problem}`);
    }
    done(null, payload);
  });
  return { take: () => pending.splice(0) };
}

function mismatch(responses: Json, status: number, contentType: string, payload: unknown): string | null {
  const schema = schemaFor(responses, status, contentType);
  if (schema === undefined) return `status ${status} is not declared`;
  if (schema === null) return `content type ${contentType} is not declared for ${status}`;
  const empty = payload === null || payload === undefined || payload === '';
  if ((schema as Json).type === 'null') return empty ? null : 'a body where none is declared';
  if (typeof payload !== 'string') return 'a body that is not JSON text';
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return 'a body that is not JSON';
  }
  const checker = checkerFor(schema);
  if (checker.Check(value)) return null;
  const [first] = checker.Errors(value);
  return `${first?.instancePath || '/'} ${first?.message ?? 'does not match'} (${JSON.stringify(value).slice(0, 300)})`;
}
