import type { Request } from 'express';

/** What the service attaches to every request it serves. */
export interface RequestContext {
  /** Request id: the trusted proxy's X-Request-Id when well formed, else `req_…`. */
  id: string;
  /** Set by ApiKeyGuard once the key is validated. */
  auth?: AuthContext;
}

export interface AuthContext {
  organizationId: string;
  apiKeyId: string;
}

export type ServiceRequest = Request & RequestContext;
