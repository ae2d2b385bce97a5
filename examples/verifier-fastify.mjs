// A Fastify resource server accepting the access tokens of a ProudAuth realm through
// @proudauth/verifier (packages/verifier/README.md). Settings come from the environment:
//   ISSUER         the realm's issuer, e.g. http://localhost:8080/realms/main
//   AUDIENCE       the audience of this API's resource
//   VERIFY_MODE    offline (default), introspection or bounded-state
//   CLIENT_ID, CLIENT_SECRET
//                  introspection: a client registered as introspector of the resource;
//                  bounded-state: a service client holding realm.session_events.read
//   PORT           default 3000 (0 picks a free port)
import {
  BoundedStateVerifier,
  bearerChallenge,
  bearerToken,
  introspectionVerifier,
  offlineVerifier,
  VerificationError,
} from '@proudauth/verifier';
import Fastify from 'fastify';

const { ISSUER, AUDIENCE, VERIFY_MODE = 'offline', CLIENT_ID, CLIENT_SECRET, PORT = '3000' } = process.env;

async function makeVerifier() {
  const base = { issuer: ISSUER, audience: AUDIENCE };
  if (VERIFY_MODE === 'introspection')
    return introspectionVerifier({ ...base, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  if (VERIFY_MODE === 'bounded-state') {
    const v = new BoundedStateVerifier({
      ...base,
      streamClientId: CLIENT_ID,
      streamClientSecret: CLIENT_SECRET,
    });
    await v.start(); // resolves once the session-event stream has been read to its end
    return v;
  }
  return offlineVerifier(base);
}

const verifier = await makeVerifier();
const app = Fastify();
app.decorateRequest('claims', null);

// Every route of this API needs a valid token; a refusal is 401, an undecidable check 503.
app.addHook('onRequest', async (req, reply) => {
  try {
    req.claims = (await verifier.verify(bearerToken(req.headers.authorization))).claims;
  } catch (e) {
    if (!(e instanceof VerificationError)) throw e;
    if (e.status === 401) reply.header('www-authenticate', bearerChallenge());
    return reply.code(e.status).send({ error: e.code });
  }
});

app.get('/orders', async (req) => ({ subject: req.claims.sub, orders: [] }));

await app.listen({ host: '127.0.0.1', port: Number(PORT) });
console.log(`listening on http://127.0.0.1:${app.server.address().port}`);
