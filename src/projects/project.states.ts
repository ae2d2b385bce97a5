// Project states (docs/api-roles.md, Projects). Roles assigned at a project's scope count only
// while it is active (effective-roles.ts).
//
//   active --suspend--> suspended --reactivate--> active
//   active | suspended --archive--> archived        (archived is final)
import { problem } from '../platform/http/problem.ts';

export type ProjectState = 'active' | 'suspended' | 'archived';
export type ProjectAction = 'suspend' | 'reactivate' | 'archive';

const MOVES: Record<ProjectAction, { from: readonly ProjectState[]; to: ProjectState }> = {
  suspend: { from: ['active'], to: 'suspended' },
  reactivate: { from: ['suspended'], to: 'active' },
  archive: { from: ['active', 'suspended'], to: 'archived' },
};

export function nextProjectState(current: ProjectState, action: ProjectAction): ProjectState {
  const move = MOVES[action];
  if (!move.from.includes(current)) throw problem.conflict(`a ${current} project cannot ${action}`);
  return move.to;
}
