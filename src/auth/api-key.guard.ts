import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ServiceRequest } from '../common/http/request-context';
import { ApiKeysService } from './api-keys.service';
import { IS_PUBLIC } from './public.decorator';

/**
 * Reads `Authorization: Bearer <key>`. A request carrying the header more than once presents no
 * key (so it gets the one 401 every bad key gets): Node keeps the first copy, a proxy or log may
 * read the last, and the service must not authenticate a request two readers see differently.
 */
export function presentedKey(req: {
  headers: Record<string, string | string[] | undefined>;
  rawHeaders?: string[];
}): string | undefined {
  const header = req.headers['authorization'];
  if (typeof header !== 'string') return undefined;
  if (authorizationHeaderCount(req.rawHeaders) > 1) return undefined;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match?.[1];
}

/** rawHeaders alternates names and values, as received. */
function authorizationHeaderCount(rawHeaders: string[] | undefined): number {
  let count = 0;
  for (let i = 0; i < (rawHeaders?.length ?? 0); i += 2)
    if (rawHeaders![i].toLowerCase() === 'authorization') count++;
  return count;
}

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]))
      return true;
    const req = context.switchToHttp().getRequest<ServiceRequest>();
    req.auth = await this.keys.authenticate(presentedKey(req));
    return true;
  }
}
