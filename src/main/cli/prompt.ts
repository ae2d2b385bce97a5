// Asking the operator for input. On a terminal, secrets are read without echo; otherwise lines
// are read from standard input in order, so scripts and tests can answer every prompt.
import { createInterface, type Interface } from 'node:readline';
import { cliIo } from './cli-io.ts';

export interface Prompter {
  ask(label: string): Promise<string>;
  /** Hidden on a terminal; `confirm` asks twice and requires the same answer. */
  secret(label: string, opts?: { confirm?: boolean }): Promise<string>;
  close(): void;
}

class LineQueue {
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string | null) => void)[] = [];
  private ended = false;
  private readonly rl: Interface;

  constructor() {
    this.rl = createInterface({ input: cliIo().stdin, terminal: false });
    this.rl.on('line', (line) => {
      const w = this.waiting.shift();
      if (w) w(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.ended = true;
      for (const w of this.waiting.splice(0)) w(null);
    });
  }

  async next(): Promise<string> {
    const ready = this.lines.shift();
    if (ready !== undefined) return ready;
    if (this.ended) throw new Error('standard input ended before every prompt was answered');
    const line = await new Promise<string | null>((resolve) => this.waiting.push(resolve));
    if (line === null) throw new Error('standard input ended before every prompt was answered');
    return line;
  }

  close(): void {
    this.rl.close();
  }
}

function readHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = cliIo().stdin;
    cliIo().stderr.write(question);
    stdin.setRawMode?.(true);
    stdin.resume();
    let value = '';
    const finish = (err?: Error) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off('data', onData);
      cliIo().stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003') return finish(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

function readVisible(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({
      input: cliIo().stdin,
      output: cliIo().stderr as NodeJS.WritableStream,
      terminal: true,
    });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

export function createPrompter(): Prompter {
  if (cliIo().stdin.isTTY) {
    return {
      ask: (label) => readVisible(`${label}: `),
      async secret(label, opts = {}) {
        const first = await readHidden(`${label}: `);
        if (opts.confirm && (await readHidden(`${label} (again): `)) !== first)
          throw new Error('the two entries differ');
        return first;
      },
      close: () => {},
    };
  }
  const queue = new LineQueue();
  return {
    ask: (label) => {
      cliIo().stderr.write(`${label}: \n`);
      return queue.next();
    },
    // Scripts answer once: confirmation guards against typos, which a pipe does not make.
    secret: (label) => {
      cliIo().stderr.write(`${label}: \n`);
      return queue.next();
    },
    close: () => queue.close(),
  };
}

/** One secret for a one-shot command: asks twice on a terminal, reads one line otherwise. */
export async function promptSecret(label: string): Promise<string> {
  const p = createPrompter();
  try {
    return await p.secret(label, { confirm: true });
  } finally {
    p.close();
  }
}
