// Copies a process keeps of what it read, by key, at most `max` of them: past the cap the one
// unused longest is dropped. Whether a copy may still serve is the caller's question (each kind is
// tagged with the revision it was read at, and a request checks that revision first).
export class KeptCopies<V> {
  private readonly copies = new Map<string, V>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  get(key: string): V | undefined {
    const copy = this.copies.get(key);
    if (copy !== undefined) {
      this.copies.delete(key);
      this.copies.set(key, copy);
    }
    return copy;
  }

  set(key: string, copy: V): void {
    this.copies.delete(key);
    this.copies.set(key, copy);
    if (this.copies.size > this.max) this.copies.delete(this.copies.keys().next().value as string);
  }

  get size(): number {
    return this.copies.size;
  }
}
