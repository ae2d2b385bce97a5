// The relationships context's public surface: relationship types and tuples.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { tuplesOfObjects } from './relationships.repo.ts';
