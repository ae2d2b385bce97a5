// Prometheus metrics of a process group (node:cluster): the primary holds no metrics of its own; a
// worker asked for /metrics asks the primary, which collects every worker's registries over IPC
// (prom-client's AggregatorRegistry) and sums them, so one scrape of the shared internal listener
// sees the whole group, whichever process the connection reached.
import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';

const ASK = 'proudauth:metrics';
const ANSWER = 'proudauth:metrics-answer';
const TIMEOUT_MS = 10_000;

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** In the primary: answers the workers' requests for the group's metrics. */
export function serveGroupMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK || typeof message.id !== 'number') return;
    const id = message.id;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id, text } satisfies Answer),
      (e: unknown) => worker.send({ type: ANSWER, id, error: (e as Error).message } satisfies Answer),
    );
  });
}

let nextId = 0;
const waiting = new Map<number, { resolve: (t: string) => void; reject: (e: Error) => void }>();
let listening = false;

/** In a worker: the group's metrics in the Prometheus text format, from the primary. */
export function renderFromPrimary(): Promise<string> {
  const send = process.send?.bind(process);
  if (!send) return Promise.reject(new Error('not a cluster worker'));
  if (!listening) {
    listening = true;
    process.on('message', (m: Answer) => {
      if (m?.type !== ANSWER) return;
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.text !== undefined) w.resolve(m.text);
      else w.reject(new Error(m.error ?? 'no metrics'));
    });
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the primary did not answer with metrics'));
    }, TIMEOUT_MS);
    timer.unref();
    waiting.set(id, {
      resolve: (t) => {
        clearTimeout(timer);
        resolve(t);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
    send({ type: ASK, id });
  });
}
