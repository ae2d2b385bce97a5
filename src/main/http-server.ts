// The public and internal listeners of one server process (and the optional mutual-TLS one,
// docs/oauth-mtls.md), and their graceful shutdown.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { registerCors } from '../api/protocol-cors.ts';
import { registerSigninCors } from '../api/signin-cors.ts';
import { registerAuditRoutes } from '../audit/audit.routes.ts';
import { registerUserBulkRoutes } from '../bulk/user-bulk.routes.ts';
import { registerClientRoutes } from '../clients/clients.routes.ts';
import { registerClientRegistration } from '../clients/registration.routes.ts';
import { registerWorkloadFederationRoutes } from '../clients/workload-federations.routes.ts';
import { registerConfigurationRoutes } from '../configuration/configuration.routes.ts';
import { registerDecisionRoutes } from '../decisions/decisions.routes.ts';
import { registerEmergencyRoutes } from '../emergency/emergency.routes.ts';
import { registerExportRoutes } from '../exports/exports.routes.ts';
import { registerGroupRoutes } from '../groups/groups.routes.ts';
import { registerHookRoutes } from '../hooks/hooks.routes.ts';
import { registerConnectionRoutes } from '../identity-providers/connections.routes.ts';
import { registerLinkedIdentityRoutes } from '../identity-providers/linked-identities.routes.ts';
import { registerTransferRoutes } from '../identity-providers/transfers.routes.ts';
import { registerMigrationPlanRoutes } from '../imports/migration-plans.routes.ts';
import { registerUserImportRoutes } from '../imports/user-imports.routes.ts';
import { registerJobRoutes } from '../jobs/jobs.routes.ts';
import { registerJwks } from '../keys/jwks.routes.ts';
import { registerSigningKeyRoutes } from '../keys/signing-keys.routes.ts';
import { registerCertificateTrustAnchorRoutes } from '../mfa/certificates/trust-anchors.routes.ts';
import { registerMeFactorOverviewRoutes } from '../mfa/me-factor-overview.routes.ts';
import { registerMeFactorRoutes } from '../mfa/me-factors.routes.ts';
import { registerMePasskeyRoutes } from '../mfa/webauthn/me-passkeys.routes.ts';
import { registerRelatedOriginsRoute } from '../mfa/webauthn/related-origins.routes.ts';
import { registerTrustedAuthenticatorRoutes } from '../mfa/webauthn/trusted-authenticators.routes.ts';
import { registerAuthorize } from '../oauth/authorize.routes.ts';
import { registerDeviceAuthorization } from '../oauth/device-authorization.routes.ts';
import { registerDiscovery } from '../oauth/discovery.routes.ts';
import { registerIntrospect } from '../oauth/introspect.routes.ts';
import { registerLogout } from '../oauth/logout.routes.ts';
import { registerPushedAuthorizationRequests } from '../oauth/par.routes.ts';
import { registerRevoke } from '../oauth/revoke.routes.ts';
import { registerSharedSignals } from '../oauth/shared-signals.routes.ts';
import { registerTokenEndpoint } from '../oauth/token.routes.ts';
import { registerUserinfo } from '../oauth/userinfo.routes.ts';
import { registerOpsGauges } from '../ops/gauges.ts';
import { registerPublicHealth } from '../ops/health.routes.ts';
import { registerInternalRoutes } from '../ops/internal.routes.ts';
import { registerMaintenanceGate } from '../ops/maintenance.ts';
import { registerOrganizationRoutes } from '../organizations/organizations.routes.ts';
import { parseListen } from '../platform/config/load.ts';
import { buildEdge } from '../platform/http/app.ts';
import { ClientAddresses } from '../platform/http/client-address.ts';
import { registerOpenApiRoute } from '../platform/http/openapi.ts';
import { registerPluginRoutes } from '../plugins/plugins.routes.ts';
import { registerProjectRoutes } from '../projects/projects.routes.ts';
import { registerProvisioningTargetRoutes } from '../provisioning/provisioning-targets.routes.ts';
import { registerBrandingRoutes } from '../realms/branding.routes.ts';
import { registerSettingsRoutes } from '../realms/settings.routes.ts';
import { registerAssistedRecoveryRoutes } from '../recovery/assisted-recovery.routes.ts';
import { registerRelationshipRoutes } from '../relationships/relationships.routes.ts';
import { registerResourceRoutes } from '../resources/resources.routes.ts';
import { registerAccessReviewRoutes } from '../reviews/access-reviews.routes.ts';
import { registerAssignmentRoutes } from '../roles/assignments.routes.ts';
import { registerRoleRoutes } from '../roles/roles.routes.ts';
import { registerSamlIdpRoutes } from '../saml-idp/saml-idp.routes.ts';
import { registerSamlLogoutRoutes } from '../saml-idp/saml-logout.routes.ts';
import { registerScimRoutes } from '../scim/scim.routes.ts';
import { registerScimConnectorRoutes } from '../scim/scim-connectors.routes.ts';
import { registerApiKeyRoutes } from '../service-principals/api-keys.routes.ts';
import { registerServicePrincipalRoutes } from '../service-principals/principals.routes.ts';
import { registerSessionEventRoutes } from '../sessions/session-events.routes.ts';
import { registerMeSessionRoutes } from '../sessions/sessions.routes.ts';
import { registerFederationRoutes } from '../signin/federation.routes.ts';
import { registerRegistrationRoutes } from '../signin/registrations.routes.ts';
import { registerSigninRoutes } from '../signin/signin.routes.ts';
import { registerSupportRoutes } from '../support/support-grants.routes.ts';
import { registerLifecycleRoutes } from '../users/lifecycle.routes.ts';
import { registerMeAccountRoutes } from '../users/me-account.routes.ts';
import { registerMeSecurityRoutes } from '../users/me-security.routes.ts';
import { registerUserRoutes } from '../users/users.routes.ts';
import { registerWebhookRoutes } from '../webhooks/webhooks.routes.ts';
import { registerWorkflowRoutes } from '../workflows/workflows.routes.ts';
import { registerBuiltinUi } from './builtin-ui.routes.ts';
import type { AppContext } from './context.ts';

export interface HttpServers {
  publicApp: FastifyInstance;
  internalApp: FastifyInstance;
  /** The same routes as publicApp over TLS asking for client certificates (server.mtls_listen). */
  mtlsApp: FastifyInstance | null;
  publicUrl: string;
  internalUrl: string;
  /** https URL of the mutual-TLS listener; null without one. */
  mtlsUrl: string | null;
  /** Drains (ready answers draining for server.drain_delay), then lets in-flight requests finish. */
  shutdown(): Promise<void>;
}

/**
 * Once draining, every answer asks the client to close its connection. A keep-alive connection
 * whose request was still in flight when the listener closed would otherwise stay open until the
 * keep-alive timeout and hold shutdown up that long.
 */
function closeConnectionsWhenDraining(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (ctx.draining) reply.header('connection', 'close');
    done(null, payload);
  });
}

/** The edge every listener shares; only the public ones shed load. */
function edgeFor(ctx: AppContext, shed: boolean, mutualTls?: { cert: Buffer; key: Buffer }): FastifyInstance {
  const { limits, server } = ctx.config;
  const app = buildEdge({
    log: ctx.log,
    metrics: ctx.metrics,
    maxBodyBytes: limits.maxBodyBytes,
    maxHeaderBytes: limits.maxHeaderBytes,
    requestTimeoutMs: limits.requestTimeoutMs,
    clientAddresses: new ClientAddresses(server.trustedProxies, server.proxyHeaders),
    ...(shed ? { maxInflight: limits.maxInflightRequests } : {}),
    ...(mutualTls ? { mutualTls } : {}),
  });
  closeConnectionsWhenDraining(app, ctx);
  return app;
}

export function buildPublicApp(ctx: AppContext, mutualTls?: { cert: Buffer; key: Buffer }): FastifyInstance {
  const app = edgeFor(ctx, true, mutualTls);
  registerMaintenanceGate(app, ctx.maintenance, ctx.clock);
  registerPublicHealth(app, {
    ...ctx,
    isDraining: () => ctx.draining,
    maxClockSkewMs: ctx.config.observability.maxClockSkewMs,
  });
  registerCors(app, ctx);
  registerSigninCors(app, ctx);
  registerJwks(app, ctx.keyStore);
  registerSigninRoutes(app, ctx);
  registerFederationRoutes(app, ctx);
  registerAuthorize(app, ctx);
  registerSamlIdpRoutes(app, ctx);
  registerSamlLogoutRoutes(app, ctx);
  registerClientRoutes(app, ctx);
  registerAccessReviewRoutes(app, ctx);
  registerWorkflowRoutes(app, ctx);
  registerUserBulkRoutes(app, ctx);
  registerAssistedRecoveryRoutes(app, ctx);
  registerWorkloadFederationRoutes(app, ctx);
  registerClientRegistration(app, ctx);
  registerResourceRoutes(app, ctx);
  registerSettingsRoutes(app, ctx);
  registerBrandingRoutes(app, ctx);
  registerConfigurationRoutes(app, ctx);
  registerTokenEndpoint(app, ctx);
  registerDeviceAuthorization(app, ctx);
  registerPushedAuthorizationRequests(app, ctx);
  registerIntrospect(app, ctx);
  registerRevoke(app, ctx);
  registerUserinfo(app, ctx);
  registerLogout(app, ctx);
  registerDiscovery(app, ctx);
  registerSharedSignals(app, ctx);
  registerUserRoutes(app, ctx);
  registerLifecycleRoutes(app, ctx);
  registerRegistrationRoutes(app, ctx);
  registerMeAccountRoutes(app, ctx);
  registerRoleRoutes(app, ctx);
  registerAssignmentRoutes(app, ctx);
  registerGroupRoutes(app, ctx);
  registerProjectRoutes(app, ctx);
  registerServicePrincipalRoutes(app, ctx);
  registerApiKeyRoutes(app, ctx);
  registerScimConnectorRoutes(app, ctx);
  registerProvisioningTargetRoutes(app, ctx);
  registerScimRoutes(app, ctx);
  registerOrganizationRoutes(app, ctx);
  registerJobRoutes(app, ctx);
  registerExportRoutes(app, ctx);
  registerUserImportRoutes(app, ctx);
  registerMigrationPlanRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerHookRoutes(app, ctx);
  registerPluginRoutes(app, ctx);
  registerAuditRoutes(app, ctx);
  registerMeSessionRoutes(app, ctx);
  registerSessionEventRoutes(app, ctx);
  registerMeFactorRoutes(app, ctx);
  registerMeFactorOverviewRoutes(app, ctx);
  registerMePasskeyRoutes(app, ctx);
  registerTrustedAuthenticatorRoutes(app, ctx);
  registerCertificateTrustAnchorRoutes(app, ctx);
  registerRelatedOriginsRoute(app, ctx);
  registerMeSecurityRoutes(app, ctx);
  registerDecisionRoutes(app, ctx);
  registerRelationshipRoutes(app, ctx);
  registerSupportRoutes(app, ctx);
  registerSigningKeyRoutes(app, ctx);
  registerEmergencyRoutes(app, ctx);
  registerConnectionRoutes(app, ctx);
  registerLinkedIdentityRoutes(app, ctx);
  registerTransferRoutes(app, ctx);
  if (ctx.config.ui.enabled) registerBuiltinUi(app, ctx.log);
  registerOpenApiRoute(app);
  return app;
}

export function buildInternalApp(ctx: AppContext): FastifyInstance {
  const { limits, observability } = ctx.config;
  const app = edgeFor(ctx, false);
  registerInternalRoutes(app, {
    ...ctx,
    metricsEnabled: observability.metricsEnabled,
    maxTokenBytes: limits.maxTokenBytes,
  });
  registerOpsGauges(ctx.metrics, ctx);
  return app;
}

const urlOf = (app: FastifyInstance, scheme = 'http'): string => {
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') return String(addr);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `${scheme}://${host}:${addr.port}`;
};

/** The mutual-TLS listener's app, when server.mtls_listen is set (load.ts insists on its files). */
function buildMtlsApp(ctx: AppContext): FastifyInstance | null {
  const { mtlsListen, mtlsCertFile, mtlsKeyFile } = ctx.config.server;
  if (mtlsListen === null || mtlsCertFile === null || mtlsKeyFile === null) return null;
  return buildPublicApp(ctx, { cert: readFileSync(mtlsCertFile), key: readFileSync(mtlsKeyFile) });
}

export async function startHttpServers(
  ctx: AppContext,
  opts: { internalRoutes?: (app: FastifyInstance) => void } = {},
): Promise<HttpServers> {
  const publicApp = buildPublicApp(ctx);
  const internalApp = buildInternalApp(ctx);
  const mtlsApp = buildMtlsApp(ctx);
  opts.internalRoutes?.(internalApp);
  const pub = parseListen(ctx.config.server.listen);
  const internal = parseListen(ctx.config.server.internalListen);
  await publicApp.listen({ host: pub.host, port: pub.port });
  try {
    await internalApp.listen({ host: internal.host, port: internal.port });
    if (mtlsApp && ctx.config.server.mtlsListen !== null) {
      const mtls = parseListen(ctx.config.server.mtlsListen);
      await mtlsApp.listen({ host: mtls.host, port: mtls.port });
    }
  } catch (e) {
    await Promise.all([publicApp.close(), internalApp.close(), mtlsApp?.close()]);
    throw e;
  }
  return {
    publicApp,
    internalApp,
    mtlsApp,
    publicUrl: urlOf(publicApp),
    internalUrl: urlOf(internalApp),
    mtlsUrl: mtlsApp ? urlOf(mtlsApp, 'https') : null,
    async shutdown() {
      ctx.draining = true;
      await new Promise((r) => setTimeout(r, ctx.config.server.drainDelayMs));
      await Promise.all([publicApp.close(), internalApp.close(), mtlsApp?.close()]);
    },
  };
}
