// ProudAuth's public listener for the benchmark, on 127.0.0.1:<port> against a seeded database,
// with the configuration table defaults (Argon2id 64 MiB t=2 p=1, 4 hashes at once, 250 ms
// padding, log level info). bench/run.ts starts it as `taskset -c 0 node --import tsx bench/server.ts`.
//
// usage: node --import tsx bench/server.ts --database-url postgres://...@127.0.0.1:P/db --root-key-file F --port N
import { parseArgs } from 'node:util';
import { createContext, requireKeyring } from '../src/main/context.ts';
import { buildPublicApp } from '../src/main/http-server.ts';
import { assertLoopback, benchConfig } from './common.ts';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'root-key-file': { type: 'string' },
    port: { type: 'string' },
  },
});
const databaseUrl = values['database-url'];
const rootKeyFile = values['root-key-file'];
const port = Number(values.port);
if (!databaseUrl || !rootKeyFile || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: server.ts --database-url URL --root-key-file FILE --port N\n');
  process.exit(2);
}
assertLoopback(databaseUrl);

const config = benchConfig({ databaseUrl, rootKeyFile, port });
const ctx = await createContext(config, { env: {} });
requireKeyring(ctx);
const app = buildPublicApp(ctx);
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(
  `${JSON.stringify({ listening: `http://127.0.0.1:${port}`, pid: process.pid, argon: config.security.password, minAuthResponseMs: config.security.minAuthResponseMs })}\n`,
);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  ctx.draining = true;
  // Bounded: a hung close must not keep the process (and the run) alive.
  setTimeout(() => process.exit(1), 5000).unref();
  app
    .close()
    .then(() => ctx.db.close())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
