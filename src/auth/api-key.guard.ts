import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ServiceRequest } from '../common/http/request-context';
import { ApiKeysService } from './api-keys.service';
import { IS_PUBLIC } from './public.decorator';

/** Reads `Authorization: Bearer <key>` and scopes the request to the key's organization. */
export function presentedKey(req: {
  headers: Record<string, string | string[] | undefined>;
}): string | undefined {
  const header = req.headers['authorization'];
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match?.[1];
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
