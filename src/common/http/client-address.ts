import * as ipaddr from 'ipaddr.js';

/** The client address, as express computed it under TRUST_PROXY, with IPv4-mapped IPv6 unwrapped. */
export function clientAddress(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  const raw = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
  try {
    return ipaddr.process(raw).toString();
  } catch {
    return raw;
  }
}
