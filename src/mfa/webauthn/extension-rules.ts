// Extension outputs (spec doc 1, Passkey policy 4 and 5): we request only credProps and
// credProtect, and an output nobody asked for fails the ceremony (the ceremony library
// leaves outputs unchecked). Client outputs come from the browser, authenticator outputs from the
// signed authenticator data.

/** The names among the outputs that were not requested. */
export function unrequestedOutputs(
  requested: readonly string[],
  clientOutputs: unknown,
  authenticatorOutputs: unknown,
): string[] {
  const names = (v: unknown): string[] =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      : [];
  const unexpected = [...names(clientOutputs), ...names(authenticatorOutputs)].filter(
    (n) => !requested.includes(n),
  );
  return [...new Set(unexpected)];
}

/** The credProtect level the authenticator reported (0 when it reported none). */
export function credProtectApplied(authenticatorOutputs: unknown): number {
  if (authenticatorOutputs === null || typeof authenticatorOutputs !== 'object') return 0;
  const v = (authenticatorOutputs as Record<string, unknown>).credProtect;
  return typeof v === 'number' ? v : 0;
}
