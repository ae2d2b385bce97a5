// A software WebAuthn authenticator for server-side tests (a browser's virtual authenticator cannot
// give trusted attestation or credProtect): it answers creation and
// request options the way a browser plus authenticator would (clientDataJSON, authenticator data,
// a COSE ES256 key, none / self / packed-with-chain attestation), with any AAGUID, flags, counter
// and extension outputs a test asks for. Chromium's virtual authenticator covers the browser path.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { nodeKey, type TestCa } from './attestation-ca.ts';

export const ZERO_AAGUID = '00000000-0000-0000-0000-000000000000';

type Cbor = Parameters<typeof isoCBOR.encode>[0];
// WebAuthn JSON as browsers give it; tests read members freely.
// biome-ignore lint/suspicious/noExplicitAny: free-form test JSON
type Json = Record<string, any>;

const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export interface Attestation {
  kind: 'none' | 'self' | 'packed';
  /** packed: the attestation key's certificate first, then intermediates. */
  leaf?: TestCa;
  chain?: TestCa[];
}

export interface CreateOptions {
  aaguid?: string;
  attestation?: Attestation;
  userVerified?: boolean;
  backupEligible?: boolean;
  backupState?: boolean;
  /** Authenticator extension outputs written into the authenticator data. */
  extensions?: Record<string, Cbor>;
  clientExtensionResults?: Json;
  origin?: string;
}

export interface GetOptions {
  userVerified?: boolean;
  /** Force the signature counter (default: one more than last time). */
  counter?: number;
  extensions?: Record<string, Cbor>;
  clientExtensionResults?: Json;
  origin?: string;
  /** Answer with this credential (default: the only one, or the one the options allow first). */
  credentialId?: string;
  /** Claim this user handle (base64url), or none with null (default: the credential's own). */
  userHandle?: string | null;
}

interface Stored {
  id: Uint8Array;
  key: KeyObject;
  userHandle: string;
  counter: number;
  rpId: string;
  backupEligible: boolean;
  backupState: boolean;
}

function coseKey(pub: KeyObject): Uint8Array {
  const jwk = pub.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, Cbor>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x as string, 'base64url')],
      [-3, Buffer.from(jwk.y as string, 'base64url')],
    ]),
  );
}

function flags(o: { up?: boolean; uv: boolean; be: boolean; bs: boolean; at: boolean; ed: boolean }): number {
  return (
    0x01 | (o.uv ? 0x04 : 0) | (o.be ? 0x08 : 0) | (o.bs ? 0x10 : 0) | (o.at ? 0x40 : 0) | (o.ed ? 0x80 : 0)
  );
}

function counterBytes(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function extensionBytes(ext: Record<string, Cbor> | undefined): Buffer {
  return ext && Object.keys(ext).length > 0
    ? Buffer.from(isoCBOR.encode(new Map(Object.entries(ext))))
    : Buffer.alloc(0);
}

export class SoftAuthenticator {
  readonly credentials: Stored[] = [];
  readonly defaultOrigin: string;

  constructor(defaultOrigin: string) {
    this.defaultOrigin = defaultOrigin;
  }

  /** Answers PublicKeyCredentialCreationOptionsJSON with a RegistrationResponseJSON. */
  async create(options: Json, o: CreateOptions = {}): Promise<Json> {
    const rpId: string = options.rp.id;
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(32);
    const be = o.backupEligible ?? false;
    const stored: Stored = {
      id,
      key: privateKey,
      userHandle: options.user.id,
      counter: 0,
      rpId,
      backupEligible: be,
      backupState: o.backupState ?? false,
    };
    this.credentials.push(stored);
    const ext = extensionBytes(o.extensions);
    const aaguid = Buffer.from((o.aaguid ?? ZERO_AAGUID).replace(/-/g, ''), 'hex');
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([
        flags({ uv: o.userVerified ?? true, be, bs: stored.backupState, at: true, ed: ext.length > 0 }),
      ]),
      counterBytes(0),
      aaguid,
      idLen,
      id,
      coseKey(publicKey),
      ext,
    ]);
    const clientDataJSON = Buffer.from(
      JSON.stringify({
        type: 'webauthn.create',
        challenge: options.challenge,
        origin: o.origin ?? this.defaultOrigin,
        crossOrigin: false,
      }),
    );
    const signed = Buffer.concat([authData, sha256(clientDataJSON)]);
    const att = o.attestation ?? { kind: 'none' };
    let fmt = 'none';
    let attStmt = new Map<string, Cbor>();
    if (att.kind === 'self') {
      fmt = 'packed';
      attStmt = new Map<string, Cbor>([
        ['alg', -7],
        ['sig', sign('sha256', signed, privateKey)],
      ]);
    } else if (att.kind === 'packed') {
      if (!att.leaf) throw new Error('packed attestation needs a leaf certificate');
      fmt = 'packed';
      attStmt = new Map<string, Cbor>([
        ['alg', -7],
        ['sig', sign('sha256', signed, await nodeKey(att.leaf))],
        ['x5c', [att.leaf.der, ...(att.chain ?? []).map((c) => c.der)]],
      ]);
    }
    const attestationObject = isoCBOR.encode(
      new Map<string, Cbor>([
        ['fmt', fmt],
        ['attStmt', attStmt],
        ['authData', authData],
      ]),
    );
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      clientExtensionResults: o.clientExtensionResults ?? { credProps: { rk: true } },
      authenticatorAttachment: 'cross-platform',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        attestationObject: b64u(attestationObject),
        transports: ['usb'],
      },
    };
  }

  /** Answers PublicKeyCredentialRequestOptionsJSON with an AuthenticationResponseJSON. */
  async get(options: Json, o: GetOptions = {}): Promise<Json> {
    const allowed: string[] = (options.allowCredentials ?? []).map((c: { id: string }) => c.id);
    const cred =
      this.credentials.find((c) => b64u(c.id) === o.credentialId) ??
      this.credentials.find((c) => allowed.length === 0 || allowed.includes(b64u(c.id)));
    if (!cred) throw new Error('no credential for these options');
    cred.counter = o.counter ?? cred.counter + 1;
    const ext = extensionBytes(o.extensions);
    const authData = Buffer.concat([
      sha256(options.rpId),
      Buffer.from([
        flags({
          uv: o.userVerified ?? true,
          be: cred.backupEligible,
          bs: cred.backupState,
          at: false,
          ed: ext.length > 0,
        }),
      ]),
      counterBytes(cred.counter),
      ext,
    ]);
    const clientDataJSON = Buffer.from(
      JSON.stringify({
        type: 'webauthn.get',
        challenge: options.challenge,
        origin: o.origin ?? this.defaultOrigin,
        crossOrigin: false,
      }),
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.key);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key',
      clientExtensionResults: o.clientExtensionResults ?? {},
      authenticatorAttachment: 'cross-platform',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        ...(o.userHandle === null ? {} : { userHandle: o.userHandle ?? cred.userHandle }),
      },
    };
  }
}
