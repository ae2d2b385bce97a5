// proudauth: the server's command line (`dev`, `serve`, `worker`, `migrate`). A thin wrapper: the
// commands run in proudauth-main.ts with this process's surroundings.
import { processIo } from './cli/cli-io.ts';
import { runProudauth } from './proudauth-main.ts';

runProudauth(process.argv.slice(2), processIo()).then((code) => {
  // A command that failed ends the process now, whatever it left open; a finished one lets the
  // event loop drain; null means a long-running command is up and its signal handler ends it.
  if (code === null || code === 0) return;
  process.exit(code);
});
