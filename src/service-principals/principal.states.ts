// Service principal states (docs/api-roles.md, Service principals). A principal that is not
// active holds no permissions and its tokens fail the live checks (token-liveness.ts).
//
//   active --disable--> disabled --enable--> active
//   active | disabled --delete--> deleted        (final; only principals without a client)
import { problem } from '../platform/http/problem.ts';
import type { PrincipalState } from './principals.repo.ts';

export type PrincipalAction = 'disable' | 'enable' | 'delete';

const MOVES: Record<PrincipalAction, { from: readonly PrincipalState[]; to: PrincipalState }> = {
  disable: { from: ['active'], to: 'disabled' },
  enable: { from: ['disabled'], to: 'active' },
  delete: { from: ['active', 'disabled'], to: 'deleted' },
};

export function nextPrincipalState(
  p: { state: PrincipalState; client_row_id: string | null },
  action: PrincipalAction,
): PrincipalState {
  // A client's principal lives and dies with it (clients.service.ts); deleting the client is the way.
  if (action === 'delete' && p.client_row_id !== null)
    throw problem.conflict(
      'this service principal belongs to a service client; delete or disable the client',
    );
  const move = MOVES[action];
  if (!move.from.includes(p.state)) throw problem.conflict(`a ${p.state} service principal cannot ${action}`);
  return move.to;
}
