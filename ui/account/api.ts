// The account API under /api/v1/realms/{realm}/me as the account page calls it: JSON in and out,
// the account-audience token as bearer, and a refusal as an ApiFailure carrying the problem's code
// and, for step_up_required and mfa_required, its reauthenticate obligation (docs/api-users.md).

export interface Obligation {
  type?: string;
  required_profile?: string;
  max_age_seconds?: number;
}

export class ApiFailure extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    readonly obligation: Obligation | null = null,
  ) {
    super(code);
  }

  /** The refusal is lifted by signing in again (too old a sign-in, or no second factor proved). */
  get needsReauth(): boolean {
    return this.code === 'step_up_required' || this.code === 'mfa_required';
  }
}

export interface Api {
  realm: string;
  call(method: string, path: string, body?: unknown): Promise<unknown>;
  /** A file the API answers with (a job download): its bytes, type and suggested name. */
  file(path: string, body: unknown): Promise<{ blob: Blob; filename: string }>;
}

async function failureOf(res: Response): Promise<ApiFailure> {
  const body = (await res.json().catch(() => ({}))) as {
    code?: string;
    obligation?: Obligation;
    errors?: { code?: string }[];
  };
  // A field error names the more useful code (invalid current password, invalid TOTP code).
  const fieldCode = body.code === 'validation_failed' ? body.errors?.[0]?.code : undefined;
  return new ApiFailure(fieldCode ?? body.code ?? `http_${res.status}`, res.status, body.obligation ?? null);
}

export function accountApi(realm: string, token: () => string): Api {
  const base = `/api/v1/realms/${encodeURIComponent(realm)}`;
  const send = (method: string, path: string, body?: unknown, accept = 'application/json') =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token()}`,
        accept,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  return {
    realm,
    async call(method, path, body) {
      const res = await send(method, path, body ?? (method === 'POST' ? {} : undefined));
      if (!res.ok) throw await failureOf(res);
      if (res.status === 204) return null;
      return res.json().catch(() => null);
    },
    async file(path, body) {
      const res = await send('POST', path, body, '*/*');
      if (!res.ok) throw await failureOf(res);
      const disposition = res.headers.get('content-disposition') ?? '';
      const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'download';
      return { blob: await res.blob(), filename };
    },
  };
}
