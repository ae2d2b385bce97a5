// The browser half of passkey ceremonies (docs/passkeys.md): the server's options JSON goes
// through the WebAuthn JSON helpers the browser ships (parse*OptionsFromJSON, toJSON), so no
// client library is needed (docs/decisions.md). Conditional mediation offers passkeys in the
// username field's autofill while the sign-in page waits for an identifier.

// The JSON helpers are newer than the DOM typings this project compiles against.
interface PublicKeyCredentialStatics {
  parseCreationOptionsFromJSON(o: unknown): PublicKeyCredentialCreationOptions;
  parseRequestOptionsFromJSON(o: unknown): PublicKeyCredentialRequestOptions;
  isConditionalMediationAvailable?(): Promise<boolean>;
}
interface JsonCredential {
  toJSON(): Record<string, unknown>;
}

const statics = (): PublicKeyCredentialStatics | null => {
  const pkc = (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential as
    | Partial<PublicKeyCredentialStatics>
    | undefined;
  return pkc && typeof pkc.parseRequestOptionsFromJSON === 'function'
    ? (pkc as PublicKeyCredentialStatics)
    : null;
};

export const passkeysSupported = (): boolean => statics() !== null;

export async function conditionalAvailable(): Promise<boolean> {
  const s = statics();
  return s?.isConditionalMediationAvailable ? s.isConditionalMediationAvailable() : false;
}

/** Runs navigator.credentials.create with the server's creation options; the credential as JSON. */
export async function createPasskey(options: unknown): Promise<Record<string, unknown>> {
  const s = statics();
  if (!s) throw new Error('unsupported');
  const cred = (await navigator.credentials.create({ publicKey: s.parseCreationOptionsFromJSON(options) })) as
    | (Credential & JsonCredential)
    | null;
  if (!cred) throw new DOMException('no credential', 'NotAllowedError');
  return cred.toJSON();
}

/** Runs navigator.credentials.get; `conditional` waits in the autofill until aborted. */
export async function getPasskey(
  options: unknown,
  opts: { conditional?: boolean; signal?: AbortSignal } = {},
): Promise<Record<string, unknown>> {
  const s = statics();
  if (!s) throw new Error('unsupported');
  const cred = (await navigator.credentials.get({
    publicKey: s.parseRequestOptionsFromJSON(options),
    ...(opts.conditional ? { mediation: 'conditional' as CredentialMediationRequirement } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  })) as (Credential & JsonCredential) | null;
  if (!cred) throw new DOMException('no credential', 'NotAllowedError');
  return cred.toJSON();
}

/** The user closed the prompt (or it timed out): not an error worth a red message. */
export const wasCancelled = (e: unknown): boolean =>
  e instanceof DOMException && (e.name === 'NotAllowedError' || e.name === 'AbortError');
