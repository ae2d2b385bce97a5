// The groups context's public surface for other folders (docs/architecture.md, import rules):
// reading groups and their members, and the group and member changes of groups.service.ts and
// group-members.service.ts (SCIM provisions groups through these).
export { addMember, type MemberRef, removeMember } from './group-members.service.ts';
export { findGroup, type GroupRow, listGroups, listMembers, type MemberRow } from './groups.repo.ts';
export { changeGroup, createGroup, deleteGroup, type GroupRoute, getGroup } from './groups.service.ts';
