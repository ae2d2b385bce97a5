// The operator operations on the internal listener of a `proudauth dev` that holds the embedded
// database (operator-access.ts): only from a loopback address, only with the published token.
// Nothing else registers them, so `proudauth serve` and PostgreSQL deployments never offer them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { bearerToken, secretsEqual } from '../platform/http/bearer.ts';
import { problem } from '../platform/http/problem.ts';
import { CliError } from './cli/cli-error.ts';
import type { AppContext } from './context.ts';
import { decodeOperatorInput, OPERATOR_OPERATIONS } from './operator-operations.ts';

/** Whether the peer is this machine (127.0.0.0/8, ::1, or either mapped into IPv6). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'loopback';
}

function admit(req: FastifyRequest, token: string): void {
  if (!isLoopbackPeer(req.socket.remoteAddress))
    throw problem.forbidden('operator operations are served to this machine only');
  const presented = bearerToken(req.headers.authorization, 512);
  if (presented === null || !secretsEqual(presented, token))
    throw problem.unauthorized('the operator token of this process is required', {
      'www-authenticate': 'Bearer',
    });
}

export function registerOperatorRoutes(app: FastifyInstance, ctx: AppContext, token: string): void {
  // Lets identity-cli check that it may go on (and ask for a password) before it sends anything.
  app.get('/operator', async (req) => {
    admit(req, token);
    return { pid: process.pid };
  });
  for (const op of OPERATOR_OPERATIONS) {
    app.route({
      method: op.method,
      url: op.path,
      handler: async (req, reply) => {
        admit(req, token);
        try {
          return reply
            .header('cache-control', 'no-store')
            .send(await op.run(ctx, decodeOperatorInput(op, req.body)));
        } catch (e) {
          // The same refusals identity-cli prints when it runs the operation itself.
          if (e instanceof CliError) throw problem.validation([], e.message);
          throw e;
        }
      },
    });
  }
}
