// ProudAuth's public listener for the benchmark, on 127.0.0.1:<port> against a seeded database,
// with the configuration table defaults (Argon2id 64 MiB t=2 p=1, 4 hashes at once, 250 ms
// padding, log level info). It runs the compiled program from dist/ (bench/run.ts builds it
// first with `tsc -p tsconfig.build.json`), as `npm start` and `proudauth serve` do, so its memory
// and CPU are those of a deployment, not of the TypeScript loader. bench/run.ts starts it as
// `taskset -c 0 node bench/server.mjs --overrides JSON --port N`; the settings come from
// common.ts (benchOverrides), no environment variables are read.
import { parseArgs } from 'node:util';

const dist = new URL('../dist/', import.meta.url);
const { createContext, requireKeyring } = await import(new URL('main/context.js', dist).href);
const { buildPublicApp } = await import(new URL('main/http-server.js', dist).href);
const { loadConfig } = await import(new URL('platform/config/load.js', dist).href);
const { processLogger } = await import(new URL('main/process-log.js', dist).href);

const { values } = parseArgs({ options: { overrides: { type: 'string' }, port: { type: 'string' } } });
const port = Number(values.port);
if (!values.overrides || !Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: server.mjs --overrides JSON --port N\n');
  process.exit(2);
}
const overrides = JSON.parse(values.overrides);
if (!/^postgres(ql)?:\/\/([^@/]*@)?(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(overrides['database.url'])) {
  process.stderr.write('refusing a non-loopback database\n');
  process.exit(2);
}

const config = loadConfig({ file: null, env: {}, overrides });
// The logger `proudauth serve` uses, so log writing costs here what it costs there.
const ctx = await createContext(config, { env: {}, log: processLogger(config, 'serve') });
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
