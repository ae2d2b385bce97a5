// Reading a secret from the operator: hidden input on a terminal, the first line of stdin otherwise.
import { createInterface } from 'node:readline';

function readLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!done) reject(new Error('no input on stdin'));
    });
  });
}

function readHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let value = '';
    const finish = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
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

/** Asks twice on a terminal (the second must match); reads one line when stdin is not a terminal. */
export async function promptSecret(label: string): Promise<string> {
  if (!process.stdin.isTTY) return readLine();
  const first = await readHidden(`${label}: `);
  const second = await readHidden(`${label} (again): `);
  if (first !== second) throw new Error('the two entries differ');
  return first;
}
