// The process surroundings of one command-line run: its environment, working directory, standard
// streams and exit code. The bin entry points run a command with the real process's; tests run it in
// their own process with injected ones (runCliInProcess), so parsing, output and exit codes are
// tested without starting a child process. Commands reach them only through cliIo(), never through
// `process` directly, so runs in one process (even concurrent ones) keep their output apart.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';

export interface CliOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CliInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?: (mode: boolean) => unknown;
}

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdin: CliInput;
  /** All of standard input at once (for `--data @-` and `config import -`). */
  readStdin(): string;
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** 0 until a command reports a failure without throwing. */
  exitCode: number;
  /** True for the real process's surroundings: only then may a command keep running or catch signals. */
  readonly ownsProcess: boolean;
}

/** The real process's surroundings; its exit code is process.exitCode. */
export function processIo(): CliIo {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    readStdin: () => readFileSync(0, 'utf8'),
    stdout: process.stdout,
    stderr: process.stderr,
    get exitCode() {
      return typeof process.exitCode === 'number' ? process.exitCode : 0;
    },
    set exitCode(code: number) {
      process.exitCode = code;
    },
    ownsProcess: true,
  };
}

/** Collects what a run writes, for an in-process run. */
export class CollectedOutput implements CliOutput {
  text = '';
  /** Called after every write, e.g. to answer a prompt once it shows. */
  onWrite: ((text: string) => void) | null = null;
  write(chunk: string | Uint8Array): boolean {
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    this.onWrite?.(this.text);
    return true;
  }
}

/**
 * Surroundings for an in-process run: `input` is all of standard input (empty when not given), or
 * `stdin` a stream the caller writes answers to as prompts show.
 */
export function injectedIo(opts: {
  env: NodeJS.ProcessEnv;
  cwd: string;
  input?: string;
  stdin?: CliInput;
}): CliIo & {
  stdout: CollectedOutput;
  stderr: CollectedOutput;
} {
  const input = opts.input ?? '';
  return {
    env: opts.env,
    cwd: opts.cwd,
    stdin: opts.stdin ?? Readable.from(input === '' ? [] : [input]),
    readStdin: () => {
      if (opts.stdin) throw new Error('standard input is a stream in this run');
      return input;
    },
    stdout: new CollectedOutput(),
    stderr: new CollectedOutput(),
    exitCode: 0,
    ownsProcess: false,
  };
}

const current = new AsyncLocalStorage<CliIo>();
let fallback: CliIo | null = null;

/** The surroundings of the run this code belongs to; the process's outside any run. */
export function cliIo(): CliIo {
  const io = current.getStore();
  if (io) return io;
  fallback ??= processIo();
  return fallback;
}

export function withCliIo<T>(io: CliIo, fn: () => Promise<T>): Promise<T> {
  return current.run(io, fn);
}

/** A path the operator gave, against the run's working directory. */
export const cliPath = (path: string): string => resolve(cliIo().cwd, path);

/** Writes one line to the run's standard error. */
export const sayErr = (line = ''): void => {
  cliIo().stderr.write(`${line}\n`);
};

/** The --config flag's file against the run's working directory, if given. */
export const configFlag = (flags: { readonly config?: unknown }): string | undefined =>
  typeof flags.config === 'string' ? cliPath(flags.config) : undefined;
