// Where a server process's JSON log lines go: file descriptor 1, in batches. Lines written during
// one turn of the event loop leave in one write when the turn ends (at once past 64 KiB), so a
// busy server makes one system call per batch instead of one per line (a line per request cost
// several percent of a token request's CPU; bench/README.md), and an idle one writes each line as
// it comes. Writes are synchronous, so lines keep their order and nothing waits in memory at exit
// beyond the current turn, which exit() writes out. A reader that does not keep up (a full
// non-blocking pipe) gets the rest on a later try, and past 16 MiB held the oldest lines are
// dropped and counted rather than the process growing without bound.
import { writeSync } from 'node:fs';

const BATCH_BYTES = 64 * 1024;
const MAX_HELD_BYTES = 16 * 1024 * 1024;
const RETRY_MS = 50;

export class LineSink {
  private lines: string[] = [];
  private held = 0;
  private pending: Buffer | null = null;
  private scheduled = false;
  private retry: NodeJS.Timeout | null = null;
  private dropped = 0;
  private readonly fd: number;

  constructor(fd: number) {
    this.fd = fd;
    process.on('exit', () => {
      if (this.retry) clearTimeout(this.retry);
      this.retry = null;
      this.flushSync();
    });
  }

  /** pino's logger.flush() lands here. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  /** pino's destination interface: one whole line per call. */
  write(line: string): boolean {
    this.lines.push(line);
    this.held += line.length;
    if (this.held > MAX_HELD_BYTES) this.dropOldest();
    if (this.held >= BATCH_BYTES) this.flushSync();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flushSync();
      });
    }
    return true;
  }

  /** Writes what is held now; what the reader does not take yet is tried again shortly. */
  flushSync(): void {
    if (this.retry) return;
    if (this.lines.length > 0) {
      let text = this.lines.join('');
      this.lines = [];
      if (this.dropped > 0) {
        text = `${JSON.stringify({ level: 40, time: Date.now(), msg: 'log lines dropped: the output did not keep up', dropped: this.dropped })}\n${text}`;
        this.dropped = 0;
      }
      const more = Buffer.from(text, 'utf8');
      this.pending = this.pending ? Buffer.concat([this.pending, more]) : more;
    }
    while (this.pending && this.pending.length > 0) {
      try {
        const n = writeSync(this.fd, this.pending);
        this.pending = n >= this.pending.length ? null : this.pending.subarray(n);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') {
          // No one is reading any more (EPIPE, EBADF): the lines cannot go anywhere.
          this.pending = null;
          break;
        }
        this.retry = setTimeout(() => {
          this.retry = null;
          this.flushSync();
        }, RETRY_MS);
        this.retry.unref();
        break;
      }
    }
    this.held = (this.pending?.length ?? 0) + this.lines.reduce((n, l) => n + l.length, 0);
  }

  private dropOldest(): void {
    while (this.held > MAX_HELD_BYTES / 2 && this.lines.length > 0) {
      this.held -= (this.lines.shift() as string).length;
      this.dropped += 1;
    }
  }
}
