import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';

/** The organization and key of the validated API key (set by ApiKeyGuard). */
export const Auth = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  const auth = ctx.switchToHttp().getRequest<ServiceRequest>().auth;
  if (!auth) throw new Error('Auth used on a route without ApiKeyGuard');
  return auth;
});
