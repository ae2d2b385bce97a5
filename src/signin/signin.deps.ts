// What the sign-in flow needs from the running process; main/ builds it (ARCHITECTURE, tier 5).
import type { GrantTypeControls } from '../emergency/grant-type-controls.ts';
import type { UpstreamClient } from '../federation/upstream-client.ts';
import type { HookCallDeps } from '../hooks/index.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { FidoMetadata } from '../mfa/index.ts';
import type { Clock } from '../platform/clock.ts';
import type { Config } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { OutboundHttp } from '../platform/net/outbound-http.ts';
import type { RealmCache } from '../realms/realm-cache.ts';
import type { PasswordHasher } from '../users/password-hasher.ts';

export interface SigninDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  keyStore: KeyStore;
  /** Seals TOTP seeds; null where no root key is configured (enrollment then refuses). */
  keyring: RootKeyring | null;
  hasher: PasswordHasher;
  realms: RealmCache;
  /** The one egress-guarded outbound HTTP client (the challenge provider). */
  outbound: OutboundHttp;
  /** security.challenge_providers by name, with the resolved security.challenge_provider_secret. */
  challengeProviders: ReadonlyMap<string, ChallengeProvider>;
  /** The operator's FIDO metadata (webauthn.metadata_blob), re-read when its files change. */
  fidoMetadata: FidoMetadata;
  /** Grant types an emergency control turned off, per realm (docs/emergency.md). */
  grantTypeControls: GrantTypeControls;
  /** The relying party of federation: upstream requests, callbacks, circuits and caches. */
  upstream: UpstreamClient;
  /** Calls the realm's synchronous hooks, outside any transaction (docs/hooks.md). */
  hooks: HookCallDeps;
}

export interface ChallengeProvider {
  url: string;
  /** Null when none is configured or its reference could not be resolved. */
  secret: string | null;
}
