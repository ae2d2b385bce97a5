// Known-answer tests of every algorithm an import carries (docs/migration.md, Reconciliation): the
// reconciliation runs the ones for the schemes it finds, in this process, so "the imported
// verifiers and factors verify" rests on code that demonstrably computes each algorithm as its
// standard or source system does. Vectors: RFC 6070 and RFC 7914 (PBKDF2, scrypt), the OpenBSD
// bcrypt vectors, the argon2 reference CLI, Firebase's published example, RFC 6238 Appendix B.
import { type OtpAlgorithm, totpAt } from '../mfa/index.ts';
import type { ImportedVerifier } from '../users/index.ts';
import { parseBcrypt, parsePhc, verifyImported } from '../users/index.ts';

const NO_KEY = { signerKey: Buffer.alloc(0), saltSeparator: Buffer.alloc(0) };

const hex = (s: string) => Buffer.from(s, 'hex');

interface VerifierAnswer {
  password: string;
  verifier: () => ImportedVerifier;
  /** Firebase's signer key and salt separator, handed to the verification directly. */
  firebaseKey?: { signerKey: Buffer; saltSeparator: Buffer };
}

const parsed = (p: ReturnType<typeof parsePhc>): ImportedVerifier => {
  if (!p.ok) throw new Error(`known answer does not parse: ${p.error.detail}`);
  return p.verifier;
};

const ANSWERS: Record<ImportedVerifier['kind'], VerifierAnswer[]> = {
  bcrypt: [
    {
      password: 'abc',
      verifier: () => parsed(parseBcrypt('$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i')),
    },
  ],
  pbkdf2: [
    {
      password: 'password',
      verifier: () => ({
        kind: 'pbkdf2',
        digest: 'sha1',
        iterations: 4096,
        salt: Buffer.from('salt'),
        key: hex('4b007901b765489abead49d926f721d065a429c1'),
      }),
    },
    {
      password: 'passwd',
      verifier: () => ({
        kind: 'pbkdf2',
        digest: 'sha256',
        iterations: 1,
        salt: Buffer.from('salt'),
        key: hex(
          '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783',
        ),
      }),
    },
  ],
  scrypt: [
    {
      password: 'password',
      verifier: () => ({
        kind: 'scrypt',
        logN: 10,
        r: 8,
        p: 16,
        salt: Buffer.from('NaCl'),
        key: hex(
          'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
        ),
      }),
    },
  ],
  argon2: [
    {
      password: 'Corr3ct horse battery',
      verifier: () =>
        parsed(
          parsePhc(
            '$argon2id$v=19$m=8192,t=2,p=2$c29tZXNhbHRzb21lc2FsdA$VdsvvesQp0mbYVG1LxfGdHm82XPnywSEBX74cMjgwYY',
          ),
        ),
    },
  ],
  'firebase-scrypt': [
    {
      password: 'user1password',
      firebaseKey: {
        signerKey: Buffer.from(
          'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
          'base64',
        ),
        saltSeparator: Buffer.from('Bw==', 'base64'),
      },
      verifier: () => ({
        kind: 'firebase-scrypt',
        rounds: 8,
        memCost: 14,
        salt: Buffer.from('42xEC+ixf3L2lw==', 'base64'),
        hash: Buffer.from(
          'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
          'base64',
        ),
        sealedKey: '',
      }),
    },
  ],
};

/** Runs the known answers of the given schemes; each must accept its password and refuse another. */
export async function verifierSelfTests(
  kinds: Iterable<ImportedVerifier['kind']>,
): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const kind of new Set(kinds)) {
    let ok = true;
    for (const a of ANSWERS[kind]) {
      const v = a.verifier();
      const key = () => a.firebaseKey ?? NO_KEY;
      ok &&= (await verifyImported(a.password, v, key)) === true;
      ok &&= (await verifyImported(`${a.password}x`, v, key)) === false;
    }
    out[kind] = ok;
  }
  return out;
}

// RFC 6238 Appendix B at T = 59 s, 8 digits.
const TOTP_ANSWERS: Record<OtpAlgorithm, { seed: string; code: string }> = {
  SHA1: { seed: '12345678901234567890', code: '94287082' },
  SHA256: { seed: '12345678901234567890123456789012', code: '46119246' },
  SHA512: { seed: '1234567890123456789012345678901234567890123456789012345678901234', code: '90693936' },
};

export function totpSelfTests(algorithms: Iterable<OtpAlgorithm>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const a of new Set(algorithms)) {
    const t = TOTP_ANSWERS[a];
    out[a] = totpAt(Buffer.from(t.seed, 'ascii'), 1, 8, a) === t.code;
  }
  return out;
}
