import * as ipaddr from 'ipaddr.js';

/** Recent addresses as given (`::ffff:127.0.0.1`) and as reported: parsing one is a cost per request. */
const recent = new Map<string, string>();
const RECENT_KEPT = 1024;

/** The client address, as express computed it under TRUST_PROXY, with IPv4-mapped IPv6 unwrapped. */
export function clientAddress(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  const raw = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
  let address = recent.get(raw);
  if (address === undefined) {
    address = normalized(raw);
    // Bounded: with a trusted proxy the address comes from a header.
    if (recent.size >= RECENT_KEPT) recent.clear();
    recent.set(raw, address);
  }
  return address;
}

function normalized(raw: string): string {
  try {
    return ipaddr.process(raw).toString();
  } catch {
    return raw;
  }
}
