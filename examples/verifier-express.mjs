// An Express resource server accepting the access tokens of a ProudAuth realm through
// @proudauth/verifier (packages/verifier/README.md). The same settings as verifier-fastify.mjs:
// ISSUER, AUDIENCE, VERIFY_MODE (offline, introspection or bounded-state), CLIENT_ID,
// CLIENT_SECRET and PORT.
import {
  BoundedStateVerifier,
  bearerChallenge,
  bearerToken,
  introspectionVerifier,
  offlineVerifier,
  VerificationError,
} from '@proudauth/verifier';
import express from 'express';

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
const app = express();

// Every route of this API needs a valid token; a refusal is 401, an undecidable check 503.
app.use(async (req, res, next) => {
  try {
    res.locals.claims = (await verifier.verify(bearerToken(req.headers.authorization))).claims;
    next();
  } catch (e) {
    if (!(e instanceof VerificationError)) return next(e);
    if (e.status === 401) res.set('www-authenticate', bearerChallenge());
    res.status(e.status).json({ error: e.code });
  }
});

app.get('/orders', (_req, res) => {
  res.json({ subject: res.locals.claims.sub, orders: [] });
});

const server = app.listen(Number(PORT), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
