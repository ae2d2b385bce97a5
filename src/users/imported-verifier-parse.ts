// Reading password verifiers in their source systems' formats into the canonical imported form
// (users/imported-verifier.ts; docs/migration.md, Password verifiers):
//   bcrypt          `$2a$`, `$2b$`, `$2y$` modular crypt strings
//   phc             PHC strings: `$argon2id$`, `$argon2i$`, `$scrypt$`, `$pbkdf2-sha256$` (also
//                   `$pbkdf2$` and `$pbkdf2-sha512$`, and passlib's bare rounds and `.` alphabet)
//   keycloak        a Keycloak password credential: credentialData {algorithm, hashIterations,
//                   additionalParameters} and secretData {value, salt} (pbkdf2, pbkdf2-sha256,
//                   pbkdf2-sha512, argon2)
//   firebase_scrypt a Firebase (or SuperTokens firebase_scrypt) hash and salt, with the project's
//                   signer key, salt separator, rounds and memory cost
// Pure functions: an error names the member of the input it is about.
import {
  type Argon2Type,
  boundsProblem,
  type ImportedVerifier,
  type Pbkdf2Digest,
} from './imported-verifier.ts';

export interface VerifierError {
  /** The member of the password object at fault, e.g. `hash` or `credential_data.hashIterations`. */
  member: string;
  code: string;
  detail: string;
}

export type Parsed = { ok: true; verifier: ImportedVerifier } | { ok: false; error: VerifierError };

const fail = (member: string, code: string, detail: string): Parsed => ({
  ok: false,
  error: { member, code, detail },
});

function checked(member: string, v: ImportedVerifier): Parsed {
  const problem = boundsProblem(v);
  return problem ? fail(member, 'unsupported_parameters', problem) : { ok: true, verifier: v };
}

// ---- encodings ----------------------------------------------------------------------------------

const STD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BCRYPT = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Standard base64 with or without padding; null on any other character or an impossible length. */
export function strictBase64(text: string): Buffer | null {
  const body = text.replace(/={1,2}$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(body) || body.length % 4 === 1) return null;
  if (body.length !== text.length && text.length % 4 !== 0) return null;
  return Buffer.from(body, 'base64');
}

/** PHC's B64 (no padding); `.` stands for `+` in passlib's variant and is read as such. */
const phcBase64 = (text: string): Buffer | null => strictBase64(text.replace(/\./g, '+'));

/** bcrypt's radix-64: the same bit packing as base64 over another alphabet. */
export function bcryptBase64(text: string): Buffer | null {
  let std = '';
  for (const c of text) {
    const i = BCRYPT.indexOf(c);
    if (i < 0) return null;
    std += STD[i];
  }
  return Buffer.from(std, 'base64');
}

// ---- bcrypt -------------------------------------------------------------------------------------

const BCRYPT_RE = /^\$(2a|2b|2y)\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;

export function parseBcrypt(hash: string): Parsed {
  const m = BCRYPT_RE.exec(hash);
  if (!m) return fail('hash', 'invalid', 'not a bcrypt hash ($2a$, $2b$ or $2y$, cost, 53 characters)');
  const salt = bcryptBase64(m[3] as string);
  const digest = bcryptBase64(m[4] as string);
  if (!salt || !digest) return fail('hash', 'invalid', 'not a bcrypt hash');
  return checked('hash', {
    kind: 'bcrypt',
    cost: Number(m[2]),
    salt: salt.subarray(0, 16),
    digest: digest.subarray(0, 23),
  });
}

// ---- PHC strings --------------------------------------------------------------------------------

function phcParams(text: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const pair of text.split(',')) {
    const m = /^([a-z0-9-]{1,32})=([A-Za-z0-9/+.-]{1,64})$/.exec(pair);
    if (!m || out.has(m[1] as string)) return null;
    out.set(m[1] as string, m[2] as string);
  }
  return out;
}

const intParam = (v: string | undefined): number =>
  v !== undefined && /^\d{1,10}$/.test(v) ? Number(v) : Number.NaN;

const PBKDF2_IDS: Record<string, Pbkdf2Digest> = {
  pbkdf2: 'sha1',
  'pbkdf2-sha256': 'sha256',
  'pbkdf2-sha512': 'sha512',
};

export function parsePhc(hash: string): Parsed {
  const parts = hash.split('$');
  if (parts[0] !== '' || parts.length < 5) return fail('hash', 'invalid', 'not a PHC string');
  const id = parts[1] as string;
  if (id === 'argon2id' || id === 'argon2i') return parsePhcArgon2(id, parts.slice(2));
  if (id === 'scrypt') return parsePhcScrypt(parts.slice(2));
  if (id in PBKDF2_IDS) return parsePhcPbkdf2(PBKDF2_IDS[id] as Pbkdf2Digest, parts.slice(2));
  return fail('hash', 'unsupported_algorithm', `PHC algorithm ${id.slice(0, 32)} is not supported`);
}

function saltAndKey(saltText: string | undefined, keyText: string | undefined) {
  const salt = saltText === undefined ? null : phcBase64(saltText);
  const key = keyText === undefined ? null : phcBase64(keyText);
  return salt && key ? { salt, key } : null;
}

function parsePhcArgon2(type: Argon2Type, rest: string[]): Parsed {
  let version = 16;
  if (rest[0]?.startsWith('v=')) {
    version = intParam(rest[0].slice(2));
    rest = rest.slice(1);
  }
  if (version !== 16 && version !== 19) return fail('hash', 'invalid', 'argon2 version must be 16 or 19');
  if (rest.length !== 3) return fail('hash', 'invalid', 'not an argon2 PHC string');
  const params = phcParams(rest[0] as string);
  const sk = saltAndKey(rest[1], rest[2]);
  if (!params || !sk || [...params.keys()].some((k) => !['m', 't', 'p'].includes(k)))
    return fail('hash', 'invalid', 'not an argon2 PHC string (m, t, p, salt and hash)');
  return checked('hash', {
    kind: 'argon2',
    type,
    version,
    memoryKib: intParam(params.get('m')),
    iterations: intParam(params.get('t')),
    parallelism: intParam(params.get('p')),
    ...sk,
  });
}

function parsePhcScrypt(rest: string[]): Parsed {
  const params = rest.length === 3 ? phcParams(rest[0] as string) : null;
  const sk = saltAndKey(rest[1], rest[2]);
  if (!params || !sk || [...params.keys()].some((k) => !['ln', 'r', 'p'].includes(k)))
    return fail('hash', 'invalid', 'not a scrypt PHC string (ln, r, p, salt and hash)');
  return checked('hash', {
    kind: 'scrypt',
    logN: intParam(params.get('ln')),
    r: intParam(params.get('r')),
    p: intParam(params.get('p')),
    ...sk,
  });
}

function parsePhcPbkdf2(digest: Pbkdf2Digest, rest: string[]): Parsed {
  if (rest.length !== 3) return fail('hash', 'invalid', 'not a pbkdf2 PHC string');
  // PHC writes i=<rounds> (and optionally l=<length>); passlib writes the bare number of rounds.
  const first = rest[0] as string;
  let iterations = intParam(first);
  if (Number.isNaN(iterations)) {
    const params = phcParams(first);
    if (!params || [...params.keys()].some((k) => !['i', 'l'].includes(k)))
      return fail('hash', 'invalid', 'not a pbkdf2 PHC string (i, salt and hash)');
    iterations = intParam(params.get('i'));
  }
  const sk = saltAndKey(rest[1], rest[2]);
  if (!sk) return fail('hash', 'invalid', 'not a pbkdf2 PHC string (salt and hash)');
  return checked('hash', { kind: 'pbkdf2', digest, iterations, ...sk });
}

// ---- Keycloak -----------------------------------------------------------------------------------

const KEYCLOAK_PBKDF2: Record<string, Pbkdf2Digest> = {
  pbkdf2: 'sha1',
  'pbkdf2-sha256': 'sha256',
  'pbkdf2-sha512': 'sha512',
};
const KEYCLOAK_ARGON2_TYPES: Record<string, Argon2Type> = { id: 'argon2id', i: 'argon2i', d: 'argon2d' };
const KEYCLOAK_ARGON2_VERSIONS: Record<string, 16 | 19> = { '1.3': 19, '1.0': 16 };

type Json = Record<string, unknown>;

/** Keycloak's export carries credentialData and secretData as JSON text; objects are taken too. */
function jsonObject(v: unknown): Json | null {
  if (typeof v === 'string') {
    try {
      return jsonObject(JSON.parse(v));
    } catch {
      return null;
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

/** Keycloak's additionalParameters are multi-valued maps: {"memory": ["7168"]}. */
function firstParam(params: Json, name: string): string | undefined {
  const v = params[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' || typeof first === 'number' ? String(first) : undefined;
}

export function parseKeycloak(credentialData: unknown, secretData: unknown): Parsed {
  const cred = jsonObject(credentialData);
  const secret = jsonObject(secretData);
  if (!cred) return fail('credential_data', 'invalid', 'not a JSON object');
  if (!secret) return fail('secret_data', 'invalid', 'not a JSON object');
  const algorithm = cred.algorithm;
  const iterations = cred.hashIterations;
  if (typeof iterations !== 'number' || !Number.isInteger(iterations))
    return fail('credential_data.hashIterations', 'invalid', 'must be an integer');
  const salt = typeof secret.salt === 'string' ? strictBase64(secret.salt) : null;
  if (!salt) return fail('secret_data.salt', 'invalid', 'must be base64');
  const key = typeof secret.value === 'string' ? strictBase64(secret.value) : null;
  if (!key) return fail('secret_data.value', 'invalid', 'must be base64');
  if (typeof algorithm === 'string' && algorithm in KEYCLOAK_PBKDF2)
    return checked('credential_data', {
      kind: 'pbkdf2',
      digest: KEYCLOAK_PBKDF2[algorithm] as Pbkdf2Digest,
      iterations,
      salt,
      key,
    });
  if (algorithm !== 'argon2')
    return fail(
      'credential_data.algorithm',
      'unsupported_algorithm',
      'Keycloak algorithms pbkdf2, pbkdf2-sha256, pbkdf2-sha512 and argon2 are supported',
    );
  const params = jsonObject(cred.additionalParameters) ?? {};
  const type = KEYCLOAK_ARGON2_TYPES[firstParam(params, 'type') ?? 'id'];
  const version = KEYCLOAK_ARGON2_VERSIONS[firstParam(params, 'version') ?? '1.3'];
  if (!type) return fail('credential_data.additionalParameters.type', 'invalid', 'must be id, i or d');
  if (!version) return fail('credential_data.additionalParameters.version', 'invalid', 'must be 1.3 or 1.0');
  const hashLength = intParam(firstParam(params, 'hashLength') ?? '32');
  if (hashLength !== key.length)
    return fail('secret_data.value', 'invalid', 'its length differs from additionalParameters.hashLength');
  return checked('credential_data', {
    kind: 'argon2',
    type,
    version,
    memoryKib: intParam(firstParam(params, 'memory') ?? '7168'),
    iterations,
    parallelism: intParam(firstParam(params, 'parallelism') ?? '1'),
    salt,
    key,
  });
}

// ---- Firebase scrypt ----------------------------------------------------------------------------

export interface FirebaseParameters {
  signerKey: Buffer;
  saltSeparator: Buffer;
  rounds: number;
  memoryCost: number;
}

/** `seal` protects the project's signer key and salt separator at rest (they work like a pepper). */
export function parseFirebase(
  hash: string,
  salt: string,
  params: FirebaseParameters,
  seal: (secret: Buffer) => string,
): Parsed {
  const h = strictBase64(hash);
  if (!h || h.length !== params.signerKey.length)
    return fail('hash', 'invalid', 'must be base64 of as many bytes as the signer key');
  const s = strictBase64(salt);
  if (!s) return fail('salt', 'invalid', 'must be base64');
  const sealedKey = seal(
    Buffer.from(
      JSON.stringify({ k: params.signerKey.toString('base64'), s: params.saltSeparator.toString('base64') }),
    ),
  );
  return checked('hash', {
    kind: 'firebase-scrypt',
    rounds: params.rounds,
    memCost: params.memoryCost,
    salt: s,
    hash: h,
    sealedKey,
  });
}
