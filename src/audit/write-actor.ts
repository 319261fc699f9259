import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AuditEvent } from './audit-log';
import { clientAddress } from '../common/http/client-address';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';

/** Who writes, from where: what the audit row of a write through the API records. */
export interface WriteActor {
  organizationId: string;
  apiKeyId: string;
  requestId: string;
  clientAddress: string | null;
}

export function writeActor(auth: AuthContext, req: ServiceRequest): WriteActor {
  return {
    organizationId: auth.organizationId,
    apiKeyId: auth.apiKeyId,
    requestId: req.id,
    clientAddress: clientAddress(req),
  };
}

/**
 * The WriteActor of the request as a route parameter: its validated API key (ApiKeyGuard), its
 * request id and client address.
 */
export const Writer = createParamDecorator((_data: unknown, ctx: ExecutionContext): WriteActor => {
  const req = ctx.switchToHttp().getRequest<ServiceRequest>();
  if (!req.auth) throw new Error('Writer used on a route without ApiKeyGuard');
  return writeActor(req.auth, req);
});

/** The audit row of a write by `actor` on a site's resource. */
export function auditOf(
  actor: WriteActor,
  siteId: string,
  action: string,
  target: { type: string; id: string },
): AuditEvent {
  return {
    organizationId: actor.organizationId,
    siteId,
    actorType: 'api_key',
    actorId: actor.apiKeyId,
    action,
    targetType: target.type,
    targetId: target.id,
    requestId: actor.requestId,
    clientAddress: actor.clientAddress,
  };
}
