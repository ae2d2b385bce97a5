// Members, invitations, join requests and ownership transfer of one organization
// (docs/api-organizations.md), administration side.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { inOrg, type OrgParams, orgCall } from '../api/org-call.ts';
import { emailConfigured } from '../notifications/index.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { pageBody } from '../platform/http/keyset.ts';
import { brandName, type RealmRow } from '../realms/index.ts';
import {
  createInvitation,
  listInvitationPage,
  reassignInvitation,
  resendInvitation,
  revokeInvitation,
} from './invitations.service.ts';
import { approveJoinRequest, denyJoinRequest } from './join-requests.service.ts';
import { decodeListQuery } from './list-query.ts';
import {
  addMember,
  changeMember,
  listMemberPage,
  type MemberChange,
  readMember,
  transferOwnership,
} from './memberships.service.ts';
import type { OrgMail } from './org-mail.ts';
import {
  decodeAddMember,
  decodeApprove,
  decodeInvitation,
  decodeOptionalReason,
  decodeOwnershipTransfer,
  decodeReassign,
  invitationParam,
  joinRequestParam,
  membershipParam,
  orgParam,
} from './organizations.decode.ts';
import { presentInvitation, presentJoinRequest, presentMembership } from './organizations.present.ts';
import { MEMBERSHIP_STATES, REQUEST_STATES } from './organizations.types.ts';

type MemberParams = OrgParams & { membership: string };
type RequestParams = OrgParams & { id: string };

export function registerMembershipRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const { limits, tokens } = ctx.config;
  const baseLimits = { ttlMs: tokens.invitationTtlMs, resends: limits.invitationResends };
  // Invitations and join-request decisions are mailed when a mail transport is configured.
  // The mails name the realm by its brand name (docs/login-ui.md, "Branding").
  const mailFor = async (realm: RealmRow): Promise<OrgMail | undefined> =>
    ctx.keyring && emailConfigured(ctx.config.delivery)
      ? { keyring: ctx.keyring, realm: await brandName(ctx.db, realm) }
      : undefined;
  const invitationLimits = async (realm: RealmRow) => {
    const mail = await mailFor(realm);
    return mail ? { ...baseLimits, mail } : baseLimits;
  };

  // ---- members ------------------------------------------------------------------------------

  apiRoute<OrgParams>(
    app,
    ctx,
    'GET',
    '/organizations/:org/members',
    inOrg('org.members.read'),
    async ({ req, realm }) => {
      const orgId = orgParam(req.params.org);
      const q = decodeListQuery(req.query, limits, `${realm.id}:${orgId}:members`, /^mem_[0-9a-z]{26}$/, {
        state: { values: MEMBERSHIP_STATES },
      });
      const page = await listMemberPage(ctx.db, realm.id, orgId, { ...q, ...q.filters });
      return pageBody(page, presentMembership, q.binding);
    },
  );

  apiRoute<OrgParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/members',
    inOrg('org.members.write'),
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const input = decodeAddMember(req.body, limits.metadataBytes);
      const view = await addMember(ctx.db, orgCall(call, caller), orgId, input);
      return reply.code(201).send(presentMembership(view));
    },
  );

  apiRoute<MemberParams>(
    app,
    ctx,
    'GET',
    '/organizations/:org/members/:membership',
    inOrg('org.members.read'),
    async ({ req, realm }) => {
      const view = await readMember(
        ctx.db,
        realm.id,
        orgParam(req.params.org),
        membershipParam(req.params.membership),
      );
      return presentMembership(view);
    },
  );

  const memberChange = (method: 'POST' | 'DELETE', path: string, change: MemberChange) =>
    apiRoute<MemberParams>(
      app,
      ctx,
      method,
      path,
      inOrg('org.members.write'),
      async ({ req, caller, call }) => {
        const orgId = orgParam(req.params.org);
        const membershipId = membershipParam(req.params.membership);
        const reason = decodeOptionalReason(req.body);
        return presentMembership(
          await changeMember(ctx.db, orgCall(call, caller), orgId, membershipId, change, reason),
        );
      },
    );
  memberChange('POST', '/organizations/:org/members/:membership/suspend', 'suspend');
  memberChange('POST', '/organizations/:org/members/:membership/reactivate', 'reactivate');
  memberChange('DELETE', '/organizations/:org/members/:membership', 'remove');

  // ---- invitations --------------------------------------------------------------------------

  apiRoute<OrgParams>(
    app,
    ctx,
    'GET',
    '/organizations/:org/invitations',
    inOrg('org.members.read'),
    async ({ req, realm }) => {
      const orgId = orgParam(req.params.org);
      const q = decodeListQuery(req.query, limits, `${realm.id}:${orgId}:invitations`, /^inv_[0-9a-z]{26}$/, {
        state: { values: REQUEST_STATES },
      });
      const page = await listInvitationPage(ctx.db, realm.id, orgId, 'invitation', { ...q, ...q.filters });
      const now = ctx.clock.now();
      return pageBody(page, (r) => presentInvitation(r, now), q.binding);
    },
  );

  apiRoute<OrgParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/invitations',
    inOrg('org.members.invite'),
    async ({ req, reply, realm, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const input = decodeInvitation(req.body);
      const r = await createInvitation(
        ctx.db,
        orgCall(call, caller),
        orgId,
        input,
        await invitationLimits(realm),
      );
      return reply.code(201).send(presentInvitation(r, call.now));
    },
  );

  apiRoute<RequestParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/invitations/:id/resend',
    inOrg('org.members.invite'),
    async ({ req, realm, caller, call }) => {
      decodeNoBody(req.body);
      const ids = [orgParam(req.params.org), invitationParam(req.params.id)] as const;
      return presentInvitation(
        await resendInvitation(ctx.db, orgCall(call, caller), ...ids, await invitationLimits(realm)),
        call.now,
      );
    },
  );

  apiRoute<RequestParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/invitations/:id/revoke',
    inOrg('org.members.invite'),
    async ({ req, caller, call }) => {
      const ids = [orgParam(req.params.org), invitationParam(req.params.id)] as const;
      const reason = decodeOptionalReason(req.body);
      return presentInvitation(
        await revokeInvitation(ctx.db, orgCall(call, caller), ...ids, reason),
        call.now,
      );
    },
  );

  apiRoute<RequestParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/invitations/:id/reassign',
    inOrg('org.members.invite'),
    async ({ req, reply, realm, caller, call }) => {
      const [orgId, id] = [orgParam(req.params.org), invitationParam(req.params.id)];
      const userId = decodeReassign(req.body);
      const next = await reassignInvitation(
        ctx.db,
        orgCall(call, caller),
        orgId,
        id,
        userId,
        await invitationLimits(realm),
      );
      return reply.code(201).send(presentInvitation(next, call.now));
    },
  );

  // ---- join requests ------------------------------------------------------------------------

  apiRoute<OrgParams>(
    app,
    ctx,
    'GET',
    '/organizations/:org/join-requests',
    inOrg('org.members.read'),
    async ({ req, realm }) => {
      const orgId = orgParam(req.params.org);
      const q = decodeListQuery(
        req.query,
        limits,
        `${realm.id}:${orgId}:join-requests`,
        /^jrq_[0-9a-z]{26}$/,
        {
          state: { values: REQUEST_STATES },
        },
      );
      const page = await listInvitationPage(ctx.db, realm.id, orgId, 'join_request', { ...q, ...q.filters });
      const now = ctx.clock.now();
      return pageBody(page, (r) => presentJoinRequest(r, now), q.binding);
    },
  );

  apiRoute<RequestParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/join-requests/:id/approve',
    inOrg('org.members.write'),
    async ({ req, realm, caller, call }) => {
      const [orgId, id] = [orgParam(req.params.org), joinRequestParam(req.params.id)];
      const roleIds = decodeApprove(req.body);
      const view = await approveJoinRequest(
        ctx.db,
        orgCall(call, caller),
        orgId,
        id,
        roleIds,
        await mailFor(realm),
      );
      return presentMembership(view);
    },
  );

  apiRoute<RequestParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/join-requests/:id/deny',
    inOrg('org.members.write'),
    async ({ req, realm, caller, call }) => {
      const [orgId, id] = [orgParam(req.params.org), joinRequestParam(req.params.id)];
      const reason = decodeOptionalReason(req.body);
      return presentJoinRequest(
        await denyJoinRequest(ctx.db, orgCall(call, caller), orgId, id, reason, await mailFor(realm)),
        call.now,
      );
    },
  );

  // ---- ownership ----------------------------------------------------------------------------

  apiRoute<OrgParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/ownership-transfers',
    inOrg('org.ownership.transfer'),
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const input = decodeOwnershipTransfer(req.body);
      const done = await transferOwnership(ctx.db, orgCall(call, caller), orgId, input);
      return reply.code(done.created ? 201 : 200).send(done.body);
    },
  );
}
