// identity-cli: the operator command line (spec doc 2, "Command-line operator tools"). A thin
// wrapper: the commands run in cli/identity-cli-main.ts with this process's surroundings.
import { processIo } from './cli/cli-io.ts';
import { runIdentityCli } from './cli/identity-cli-main.ts';

runIdentityCli(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
