// The contract of one login screen: it answers one next-action type of the transaction API
// (docs/login-ui.md, "Adding a screen"). The controller in ../main.ts picks the screen, shows its
// title, alternatives and errors, and runs the steps the screen asks for.
import type { MessageKey } from '../../lib/i18n.js';
import type { NextAction, TxState } from '../../lib/transaction.js';

export interface StepOptions {
  /** Shown when the answer still offers this screen's action: the proof was not accepted. */
  failed?: MessageKey;
}

export interface ScreenContext {
  state: TxState;
  action: NextAction;
  /** The authenticator secret from totp/enroll, kept while enrollment is offered. */
  totp: { secret: string; otpauth_uri: string } | null;
  /** Runs a step (path below the transaction) and shows whatever comes next. */
  step(path: string, body?: Record<string, unknown>, opts?: StepOptions): Promise<void>;
  /** Runs a step that changes no screen (e.g. remember-me) and returns the state it answered. */
  send(path: string, body?: Record<string, unknown>): Promise<TxState>;
}

export interface Screen {
  /** The next_actions type this screen answers. */
  readonly type: string;
  /** Offered actions this screen also covers, so they are not listed as alternatives. */
  readonly supersedes?: readonly string[];
  readonly title: MessageKey;
  /** A title that depends on the action's state (a reset code sent, a reset proved). */
  titleOf?(action: NextAction): MessageKey;
  /** The link text that switches to this screen when another one is shown first. */
  readonly alternative?: MessageKey;
  render(ctx: ScreenContext): HTMLElement;
}
