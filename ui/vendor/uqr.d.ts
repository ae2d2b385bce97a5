// The browser loads uqr's own ES module, copied here by scripts/build-ui.ts; its types come from
// the package.
export * from 'uqr';
