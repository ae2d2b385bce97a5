// PGlite keeps no lock on its data directory, so two processes could open the same
// files and corrupt them. This lock file refuses the second process with a clear message.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DirectoryLockedError extends Error {
  /** The pid of the live process that holds the directory, when another one does. */
  readonly holder: number | null;

  constructor(message: string, holder: number | null = null) {
    super(message);
    this.holder = holder;
  }
}

export interface DirLock {
  release(): void;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDirLock(dir: string): DirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'proudauth.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      };
      process.on('exit', release);
      return { release };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
        throw new DirectoryLockedError(
          `the embedded database in ${dir} is in use by another ProudAuth process (pid ${holder}); ` +
            'embedded mode runs server and worker in one process: stop the other one, or set database.url to use PostgreSQL',
          holder,
        );
      }
      if (holder === process.pid) {
        throw new DirectoryLockedError(`the embedded database in ${dir} is already open in this process`);
      }
      unlinkSync(path); // stale lock from a process that died
    }
  }
  throw new DirectoryLockedError(`could not lock ${dir}`);
}
