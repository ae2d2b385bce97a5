// The README's examples, run as a reader would run them against `npm start`: its code blocks are
// read from README.md and executed by bash, with the address, realm and secrets of a test server
// put in place of `http://localhost:8080`, `main` and the placeholders. Where the README shows an
// output, the real output must match it, each `...` standing for any text.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../../src/mfa/otp.ts';
import { loadConfig } from '../../../src/platform/config/load.ts';
import { childEnv, type RunResult } from '../cli/cli-process.ts';
import {
  ADMIN_PASSWORD,
  type ExampleServer,
  exampleServer,
  missingTools,
  ROOT,
  runExample,
} from './examples-kit.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const README_ORIGIN = 'http://localhost:8080';
const README_REALM = 'main';

interface Block {
  lang: string;
  text: string;
}

/** The fenced code blocks of the README section with this heading, in order. */
function blocksOf(heading: string): Block[] {
  const start = README.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README has no section "${heading}"`);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1] ?? '',
    text: m[2] ?? '',
  }));
}

/** The block whose text includes `marker`, and the output block right after it if there is one. */
function commandOf(blocks: Block[], marker: string): { command: string; output: string | null } {
  const i = blocks.findIndex((b) => b.lang === 'sh' && b.text.includes(marker));
  assert.ok(i >= 0, `README shows no command with ${marker}`);
  const next = blocks[i + 1];
  return { command: blocks[i]?.text ?? '', output: next && next.lang === '' ? next.text : null };
}

/** The README's server and realm become the test's. */
function localize(s: ExampleServer, text: string): string {
  return text
    .replaceAll(README_ORIGIN, s.origin)
    .replaceAll(`/realms/${README_REALM}`, `/realms/${s.realm}`)
    .replace(/\bREALM=main\b/g, `REALM=${s.realm}`)
    .replace(/--realm main\b/g, `--realm ${s.realm}`);
}

/** A real output in the README's terms: the test's server and realm written as the README's. */
function asInReadme(s: ExampleServer, output: string): string {
  return output
    .replaceAll(encodeURIComponent(s.origin), encodeURIComponent(README_ORIGIN))
    .replaceAll(s.origin, README_ORIGIN)
    .replaceAll(s.realm, README_REALM);
}

/**
 * The output matches the README's rendering of it: a line that is only `...` stands for any
 * number of lines, `...` within a line for any text on that line; everything else is literal.
 */
function assertShownOutput(shown: string, real: string): void {
  const literal = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = shown
    .trimEnd()
    .split('\n')
    .map((line) =>
      line.trim() === '...' ? '(?:.*\\n)*?' : `${line.split('...').map(literal).join('.*?')}\\n`,
    )
    .join('');
  assert.match(
    `${real.trimEnd()}\n`,
    new RegExp(`^${pattern}$`),
    `the README shows:\n${shown}\nthe real output:\n${real}`,
  );
}

// `npm run identity-cli -- ARGS` as package.json defines it, without npm's own banner lines on
// standard output (the README's outputs are the command's).
const IDENTITY_CLI = 'node --import tsx src/main/identity-cli.ts';
const NPM_PRELUDE = `npm() {
  if [ "$1 $2 $3" = "run identity-cli --" ]; then shift 3; ${IDENTITY_CLI} "$@"; else echo "unexpected: npm $*" >&2; return 99; fi
}
`;

test('package.json runs identity-cli as the README test does', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.equal(pkg.scripts['identity-cli'], IDENTITY_CLI);
});

/** Runs a README block with bash; `answer` is called with standard error as it grows. */
function bash(
  script: string,
  env: Record<string, string>,
  answer: (stderr: string, write: (line: string) => void) => void = () => {},
): Promise<RunResult> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', NPM_PRELUDE + script], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const write = (line: string) => child.stdin.write(`${line}\n`);
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    answer(stderr, write);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after 120 s:\n${script}\n${stdout}\n${stderr}`));
    }, 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const ok = (r: RunResult, what: string) => assert.equal(r.code, 0, `${what}\n${r.stdout}\n${r.stderr}`);

function configDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-readme-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const missing = missingTools(['bash', 'curl', 'openssl', 'oathtool']);

test('"Signing in": the script as shown runs and prints what the README shows', {
  skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false,
}, async (t) => {
  const s = await exampleServer(t);
  const { command, output } = commandOf(blocksOf('Signing in'), 'examples/headless-signin.sh');
  assert.ok(output, 'the README shows the output');
  assert.ok(command.includes("PASSWORD='<printed at first start>'"));
  const r = await bash(localize(s, command).replace('<printed at first start>', ADMIN_PASSWORD), {});
  ok(r, command);
  assertShownOutput(output, asInReadme(s, r.stdout));
});

test('"Registering a client": the administration commands and the openid-client example as shown', {
  skip: missingTools(['bash']).length > 0 ? 'needs bash' : false,
}, async (t) => {
  const s = await exampleServer(t);
  // identity-cli's server is the configured public origin, as with `npm start`.
  const home = configDir(t);
  const env = { XDG_CONFIG_HOME: home, HOME: home, PROUDAUTH_SERVER_PUBLIC_ORIGIN: s.origin };

  // Quick start: the administrator's first login, typing the password and an authenticator code.
  const login = commandOf(blocksOf('Quick start'), 'identity-cli -- login');
  let answered = 0;
  const loggedIn = await bash(localize(s, login.command), env, (stderr, write) => {
    const key = /key: ([A-Z2-7]+)/.exec(stderr)?.[1];
    if (answered === 0 && stderr.includes('Password')) {
      answered = 1;
      write(ADMIN_PASSWORD);
    } else if (answered === 1 && key) {
      answered = 2;
      write(totpAt(decodeBase32(key), totpStep(Date.now())));
    }
  });
  ok(loggedIn, login.command);

  // Every administration command of the section, in order; shown outputs must match.
  const blocks = blocksOf('Registering a client and signing in with any OIDC library');
  let secret: string | null = null;
  const commands = blocks.filter((b) => b.lang === 'sh' && b.text.includes('identity-cli -- api'));
  assert.ok(commands.length >= 3, 'the README registers a resource, a client, a grant and a user');
  for (const block of commands) {
    const r = await bash(localize(s, block.text), env);
    ok(r, block.text);
    const { output } = commandOf(blocks, block.text);
    if (output) assertShownOutput(output, asInReadme(s, r.stdout));
    const created = /"client_secret": "(pa_cs_[^"]+)"/.exec(r.stdout)?.[1];
    if (created) secret = created;
  }
  assert.ok(secret, 'a client secret was shown');
  // Commands quoted in the text (`npm run identity-cli -- api GET /users`) run as well.
  const quoted = [...README.matchAll(/`(npm run identity-cli -- api GET [^`]+)`/g)].map((m) => m[1] ?? '');
  assert.ok(quoted.length > 0);
  for (const command of quoted) {
    const r = await bash(localize(s, command), env);
    ok(r, command);
    assert.ok(JSON.parse(r.stdout), command);
  }

  // The openid-client example with the secret the README's client registration printed.
  const example = commandOf(blocks, 'examples/openid-client-code-flow.mjs');
  assert.ok(example.output, 'the README shows the output');
  assert.ok(example.command.includes("CLIENT_SECRET='<client_secret above>'"));
  const r = await bash(localize(s, example.command).replace('<client_secret above>', secret), env);
  ok(r, example.command);
  assertShownOutput(example.output, asInReadme(s, r.stdout));
  const [tokens, profile] = r.stdout
    .trim()
    .split(/\n(?=\{)/)
    .map((j) => JSON.parse(j) as Record<string, unknown>);
  assert.equal(tokens?.refresh_token, 'received');
  assert.equal(profile?.sub, tokens?.id_token_subject);
  assert.equal(typeof profile?.updated_at, 'number');
});

test('the openid-client example fails with its message when a setting is missing', async () => {
  const r = await runExample(process.execPath, ['examples/openid-client-code-flow.mjs'], {
    ISSUER: 'http://127.0.0.1:9/realms/main',
  });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /set CLIENT_ID/);
});

test('"Configuration": the production example is a valid configuration', (t) => {
  const [yaml] = blocksOf('Configuration').filter((b) => b.lang === 'yaml');
  assert.ok(yaml, 'the README shows a configuration file');
  const file = join(configDir(t), 'proudauth.yaml');
  writeFileSync(file, yaml.text);
  // The key and token references are checked when a process resolves them, not when it loads.
  const config = loadConfig({ file, env: {} });
  assert.equal(config.environment, 'production');
  assert.equal(config.server.publicOrigin, 'https://id.example.com');
});
