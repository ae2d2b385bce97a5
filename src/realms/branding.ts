// A realm's brand (docs/login-ui.md, "Branding"): the name, colour and support contact of policy
// section `interaction`, and the uploaded logo (migration 0041). The name falls back to the
// realm's display name; everything else is absent until set. Logos are PNG, JPEG or WebP only,
// recognised by their first bytes, never SVG (an SVG can carry script).
import { createHash } from 'node:crypto';
import type { Queryable } from '../platform/db/db.ts';
import { currentPolicy, policyValue, type RealmPolicy } from './policy.repo.ts';
import type { RealmRow } from './realm.repo.ts';

/** The largest logo accepted, in bytes (the JSON upload carries it base64, within the body limit). */
export const MAX_LOGO_BYTES = 128 * 1024;

export interface RealmBrand {
  display_name: string;
  primary_color: string | null;
  support_contact: string | null;
  /** Path of the logo on this server (with its digest, so a new logo is a new URL), or null. */
  logo_url: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The name a realm shows people: `interaction.display_name`, else the realm's display name. */
export function brandNameOf(realm: Pick<RealmRow, 'display_name'>, policy: RealmPolicy): string {
  return text(policyValue(policy, 'interaction', 'display_name')) ?? realm.display_name;
}

/** The same name when the caller holds no policy yet. */
export async function brandName(q: Queryable, realm: Pick<RealmRow, 'id' | 'display_name'>): Promise<string> {
  return brandNameOf(realm, await currentPolicy(q, realm.id));
}

export const logoPath = (realmName: string, digest: string) =>
  `/api/v1/realms/${encodeURIComponent(realmName)}/branding/logo?v=${digest.slice(0, 16)}`;

export function brandOf(
  realm: Pick<RealmRow, 'name' | 'display_name'>,
  policy: RealmPolicy,
  logoDigest: string | null,
): RealmBrand {
  return {
    display_name: brandNameOf(realm, policy),
    primary_color: text(policyValue(policy, 'interaction', 'primary_color')),
    support_contact: text(policyValue(policy, 'interaction', 'support_contact')),
    logo_url: logoDigest ? logoPath(realm.name, logoDigest) : null,
  };
}

/** The image type from the first bytes (PNG, JPEG, WebP), or null for anything else. */
export function sniffImage(b: Buffer): 'image/png' | 'image/jpeg' | 'image/webp' | null {
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return null;
}

export const logoDigestOf = (body: Buffer) => createHash('sha256').update(body).digest('base64url');
