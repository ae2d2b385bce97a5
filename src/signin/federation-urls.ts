// Where an upstream provider sends the browser back (docs/federation.md, Callback URL): one
// redirect URI per connection, named by its alias, so an answer that arrives at another
// connection's address is told apart (RFC 9700 section 4.4, mix-up defence).

/** The upstream callbacks of a realm live under this path (the pa_fed cookie's path). */
export const federationPath = (realm: string) => `/realms/${realm}/federation/`;

export const federationCallbackUrl = (publicOrigin: string, realm: string, alias: string): string =>
  `${publicOrigin}${federationPath(realm)}${encodeURIComponent(alias)}/callback`;
