// oidc-provider ships no type declarations (and @types/oidc-provider trails its releases); the
// tests use a handful of its members, checked by running them.
declare module 'oidc-provider';
