/** A failure the operator caused (bad arguments, existing objects): printed without a stack trace. */
export class CliError extends Error {}
