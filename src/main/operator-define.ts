// The shape of an operator operation (operator-operations.ts): its route on the internal listener
// of a `proudauth dev` that holds the database, its input decoder and what it does.
import type { Decoder } from '../platform/http/decode.ts';
import type { AppContext } from './context.ts';

export interface OperatorOperation<I> {
  method: 'GET' | 'PUT' | 'POST';
  /** On the internal listener of the process that holds the database. */
  path: string;
  decode: Decoder<I>;
  run(ctx: AppContext, input: I): Promise<unknown>;
}

// The decoder comes first so that TypeScript takes the input type from it, not from `run`.
export function define<I>(
  method: OperatorOperation<I>['method'],
  path: string,
  decode: Decoder<I>,
  run: (ctx: AppContext, input: I) => Promise<unknown>,
): OperatorOperation<I> {
  return { method, path, decode, run };
}
