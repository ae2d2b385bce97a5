/** A failure the operator caused (bad arguments, existing objects): printed without a stack trace. */
export class CliError extends Error {}

/** The stored sign-in cannot be refreshed any more (its session ended): only a new login helps. */
export class SignInEnded extends CliError {}
