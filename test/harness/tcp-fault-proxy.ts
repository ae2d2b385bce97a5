// A TCP proxy of the tests' own in front of PostgreSQL, for fault drills (test/integration/faults):
// it forwards bytes both ways and, on command, resets every open connection, refuses new ones for
// a while (the listening socket closes, so clients see ECONNREFUSED), or delays every chunk.
import { createServer, type Server, Socket } from 'node:net';

export interface Target {
  host: string;
  port: number;
}

/** One direction of a connection: chunks leave in order, each no earlier than `latency` after arrival. */
function delayedPipe(from: Socket, to: Socket, latency: () => number): void {
  let lastDue = 0;
  from.on('data', (chunk: Buffer) => {
    const ms = latency();
    if (ms <= 0 && lastDue <= Date.now()) {
      to.write(chunk);
      return;
    }
    const due = Math.max(Date.now() + ms, lastDue);
    lastDue = due;
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, due - Date.now());
  });
}

export class TcpFaultProxy {
  /** Added to every chunk in both directions, in milliseconds. */
  latencyMs = 0;
  private readonly pairs = new Set<[Socket, Socket]>();
  private server: Server | null = null;

  private readonly target: Target;
  port = 0;

  private constructor(target: Target) {
    this.target = target;
  }

  static async start(target: Target): Promise<TcpFaultProxy> {
    const proxy = new TcpFaultProxy(target);
    await proxy.listen();
    return proxy;
  }

  /** Open client connections right now. */
  get connections(): number {
    return this.pairs.size;
  }

  private listen(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        this.port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    upstream.connect(this.target.port, this.target.host);
    delayedPipe(client, upstream, () => this.latencyMs);
    delayedPipe(upstream, client, () => this.latencyMs);
  }

  /** Resets (TCP RST) every open connection, as a dropped network path or a failed-over primary would. */
  resetAll(): number {
    const n = this.pairs.size;
    for (const [client, upstream] of [...this.pairs]) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    this.pairs.clear();
    return n;
  }

  /** Resets every open connection and refuses new ones until resume(). */
  async refuse(): Promise<void> {
    this.resetAll();
    await this.stopListening();
  }

  /** Accepts connections again, on the same port. */
  async resume(): Promise<void> {
    if (!this.server) await this.listen();
  }

  private stopListening(): Promise<void> {
    const server = this.server;
    this.server = null;
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  async close(): Promise<void> {
    this.resetAll();
    await this.stopListening();
  }
}
