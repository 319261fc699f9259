import type { NextFunction, Request, Response } from 'express';
import { newId } from '../ids/ids';
import type { ServiceRequest } from './request-context';

const WELL_FORMED = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Gives every request an id and echoes it as X-Request-Id. An incoming X-Request-Id is used only
 * when a trusted proxy set it (the peer is trusted per TRUST_PROXY) and it is well formed.
 */
export function requestIdMiddleware(isTrustedPeer: (address: string) => boolean) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers['x-request-id'];
    const peer = req.socket.remoteAddress ?? '';
    const id =
      typeof incoming === 'string' && WELL_FORMED.test(incoming) && isTrustedPeer(peer)
        ? incoming
        : newId('req');
    (req as ServiceRequest).id = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
