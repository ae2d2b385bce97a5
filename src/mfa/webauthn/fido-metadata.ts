// The operator's FIDO metadata (spec doc 1, Passkey policy 1; settings webauthn.metadata_blob,
// webauthn.metadata_root and webauthn.metadata_grace_period): the BLOB file verified by
// fido-blob.ts and re-read when it changes, so an operator replaces it without a restart (a
// replacement that fails verification is logged and the last good one kept). A BLOB past its
// nextUpdate date is stale: still used, with a warning in the log and on /status. Past the grace
// period it is expired and makes no attestation trusted until a newer one is installed.
import { readFile, stat } from 'node:fs/promises';
import { type FidoEntry, verifyMetadataBlob } from './fido-blob.ts';

export type Freshness = 'current' | 'stale' | 'expired';

/** Where `now` falls against the BLOB's nextUpdate and the operator's grace period. */
export function freshness(nextUpdate: Date, gracePeriodMs: number, now: Date): Freshness {
  if (now.getTime() < nextUpdate.getTime()) return 'current';
  return now.getTime() < nextUpdate.getTime() + gracePeriodMs ? 'stale' : 'expired';
}

export interface FidoMetadataSource {
  blobFile: string | null;
  rootFile: string | null;
  gracePeriodMs: number;
}

export interface MetadataLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** What trust decisions read: the entries that may be used, and whether a BLOB ever verified. */
export interface OperatorTrust {
  /** Empty when no BLOB verified or the loaded one expired. */
  entries: ReadonlyMap<string, FidoEntry>;
  /**
   * A verified BLOB with entries is loaded, even an expired one: expired metadata is untrusted
   * metadata (422 attestation_not_trusted), not missing metadata (409 feature_disabled).
   */
  exists: boolean;
}

/** The `fido_metadata` member of the operator status object (docs/operations.md). */
export interface FidoMetadataStatus {
  /** `unavailable`: configured, but no BLOB has verified since the process started. */
  state: Freshness | 'unavailable';
  next_update: string | null;
  trusted_until: string | null;
  entries: number;
}

const UNREADABLE = 'unreadable';

interface Loaded {
  entries: Map<string, FidoEntry>;
  nextUpdate: Date;
}

/** The operator's metadata as last loaded; each read re-reads the files once they change. */
export class FidoMetadata {
  private loaded: Loaded | null = null;
  private stamp = '';
  /** The BLOB and freshness last warned about, so a stale BLOB is logged once, not per request. */
  private warned = '';

  private readonly source: FidoMetadataSource;
  private readonly log: MetadataLog;
  private readonly now: () => Date;

  constructor(source: FidoMetadataSource, log: MetadataLog, now: () => Date) {
    this.source = source;
    this.log = log;
    this.now = now;
  }

  get configured(): boolean {
    return this.source.blobFile !== null && this.source.rootFile !== null;
  }

  /** The entries trust decisions may use, and whether a verified BLOB exists at all. */
  async trust(): Promise<OperatorTrust> {
    const loaded = await this.current();
    if (!loaded) return { entries: new Map(), exists: false };
    const usable = this.judge(loaded) !== 'expired';
    return { entries: usable ? loaded.entries : new Map(), exists: loaded.entries.size > 0 };
  }

  /** The status member; null when no metadata is configured. */
  async status(): Promise<FidoMetadataStatus | null> {
    if (!this.configured) return null;
    const loaded = await this.current();
    if (!loaded) return { state: 'unavailable', next_update: null, trusted_until: null, entries: 0 };
    return {
      state: this.judge(loaded),
      next_update: loaded.nextUpdate.toISOString().slice(0, 10),
      trusted_until: new Date(loaded.nextUpdate.getTime() + this.source.gracePeriodMs).toISOString(),
      entries: loaded.entries.size,
    };
  }

  /** The BLOB's freshness now, warning once per BLOB and freshness that is not current. */
  private judge(loaded: Loaded): Freshness {
    const state = freshness(loaded.nextUpdate, this.source.gracePeriodMs, this.now());
    const key = `${this.stamp}:${state}`;
    if (state !== 'current' && key !== this.warned) {
      this.warned = key;
      const fields = {
        next_update: loaded.nextUpdate.toISOString().slice(0, 10),
        grace_period_ms: this.source.gracePeriodMs,
      };
      this.log.warn(
        fields,
        state === 'stale'
          ? 'FIDO metadata is past its nextUpdate date; install a newer BLOB before the grace period ends'
          : 'FIDO metadata is past its nextUpdate date and grace period; it no longer makes any attestation trusted',
      );
    }
    return state;
  }

  private async current(): Promise<Loaded | null> {
    const { blobFile, rootFile } = this.source;
    if (!blobFile || !rootFile) return null;
    let stamp: string;
    try {
      const [b, r] = await Promise.all([stat(blobFile), stat(rootFile)]);
      stamp = `${b.mtimeMs}:${b.size}:${r.mtimeMs}:${r.size}`;
    } catch (e) {
      if (this.stamp !== UNREADABLE)
        this.log.warn({ err: (e as Error).message }, 'FIDO metadata files are not readable');
      this.stamp = UNREADABLE;
      return this.loaded;
    }
    if (stamp === this.stamp) return this.loaded;
    this.stamp = stamp;
    try {
      const [blob, root] = await Promise.all([readFile(blobFile, 'utf8'), readFile(rootFile, 'utf8')]);
      this.loaded = await verifyMetadataBlob(blob, root, this.now());
      this.log.info(
        { entries: this.loaded.entries.size, next_update: this.loaded.nextUpdate.toISOString().slice(0, 10) },
        'FIDO metadata loaded',
      );
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'FIDO metadata did not verify; keeping the last good one');
    }
    return this.loaded;
  }
}
