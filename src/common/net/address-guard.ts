import * as ipaddr from 'ipaddr.js';

/**
 * Which network addresses the page importer may connect to. Customers control the addresses it
 * fetches, so only public unicast addresses pass: loopback, private, link-local, CGNAT,
 * multicast, reserved, documentation, metadata and every IPv6 form that embeds or tunnels to
 * IPv4 (mapped, NAT64, 6to4, Teredo) are refused. Decided by ipaddr.js ranges plus the extra
 * blocks below, never by a regex on the text.
 */

/** Blocks refused in addition to every non-`unicast` range of ipaddr.js. */
const EXTRA_REFUSED: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [
  // Cloud metadata and platform services reachable on public-looking addresses.
  ipaddr.parseCIDR('168.63.129.16/32'), // Azure wire server
  ipaddr.parseCIDR('100.100.100.200/32'), // Alibaba metadata (also CGNAT)
  ipaddr.parseCIDR('fd00:ec2::254/128'), // AWS metadata over IPv6 (also unique local)
  // IPv4-compatible (deprecated) ::a.b.c.d and the whole IETF protocol block 2001::/23.
  ipaddr.parseCIDR('::/96'),
  ipaddr.parseCIDR('2001::/23'),
  ipaddr.parseCIDR('2001:db8::/32'),
];

const LOOPBACK_V4 = ipaddr.parseCIDR('127.0.0.0/8');

/** The address as ipaddr parses it, IPv4-mapped IPv6 unwrapped; undefined if it is not an address. */
export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // Only the strict dotted-quad / IPv6 forms here: hosts in other IPv4 spellings are normalised
  // by canonicalHost before they get this far.
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !ipaddr.IPv6.isValid(text)) return undefined;
  try {
    return ipaddr.process(text);
  } catch {
    return undefined;
  }
}

export function isLoopbackAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.kind() === 'ipv4') return (parsed as ipaddr.IPv4).match(LOOPBACK_V4);
  return parsed.range() === 'loopback';
}

/** Whether `address` (an IP address, never a name) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  if (parsed.range() !== 'unicast') return false;
  for (const [block, bits] of EXTRA_REFUSED) {
    if (parsed.kind() === block.kind() && parsed.match(block, bits)) return false;
  }
  if (parsed.kind() === 'ipv6') {
    // Only global unicast 2000::/3 is routed on the internet.
    const first = (parsed as ipaddr.IPv6).parts[0];
    if (first < 0x2000 || first > 0x3fff) return false;
  }
  return true;
}

/**
 * The canonical host of a URL's host part, as the WHATWG URL parser gives it: every IPv4
 * spelling (127.1, 0x7f.1, 017700000001, 2130706433) becomes dotted decimal, IPv6 is bracketed
 * and compressed, names are lowercased and punycoded. Undefined when it is not a valid host.
 */
export function canonicalHost(host: string): string | undefined {
  if (host.length === 0 || /[/?#@\\\s]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

/** The IP address a canonical host is written as, if it is an IP literal. */
export function hostAddress(hostname: string): string | undefined {
  const text = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return parseAddress(text) ? text : undefined;
}

export interface AddressPolicy {
  /** Test-only (IMPORT_ALLOW_LOOPBACK): loopback addresses pass, on any port. */
  allowLoopback: boolean;
}

/**
 * Whether a connection to `addresses` (every address the host resolved to) on `port` is
 * allowed: every address must pass, and the port must be 80 or 443, unless the test-only
 * setting lets loopback fixture servers through on any port.
 */
export function connectionAllowed(
  addresses: readonly string[],
  port: number,
  policy: AddressPolicy,
): boolean {
  if (addresses.length === 0) return false;
  if (policy.allowLoopback && addresses.every(isLoopbackAddress)) return true;
  if (port !== 80 && port !== 443) return false;
  return addresses.every(isPublicAddress);
}
