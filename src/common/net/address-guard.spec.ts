import { describe, expect, it } from '@jest/globals';
import { canonicalHost, connectionAllowed, hostAddress, isPublicAddress } from './address-guard';

const STRICT = { allowLoopback: false };

/** What the fetcher checks for a URL host written as an IP literal: canonical host → address → policy. */
function literalAllowed(host: string, port = 443): boolean {
  const canonical = canonicalHost(host);
  if (!canonical) return false;
  const address = hostAddress(canonical);
  if (!address) throw new Error(`${host} did not normalise to an address (got ${canonical})`);
  return connectionAllowed([address], port, STRICT);
}

describe('address guard: every address must be public (strict default)', () => {
  it.each([
    // loopback in every IPv4 spelling
    ['127.0.0.1'],
    ['127.1'],
    ['0x7f.1'],
    ['0x7f.0.0.1'],
    ['0177.0.0.1'],
    ['017700000001'],
    ['2130706433'],
    ['0x7f000001'],
    ['127.255.255.254'],
    // IPv6 loopback and IPv4 embedded in IPv6
    ['[::1]'],
    ['[0:0:0:0:0:0:0:1]'],
    ['[::ffff:127.0.0.1]'],
    ['[::ffff:7f00:1]'],
    ['[0:0:0:0:0:ffff:127.0.0.1]'],
    ['[::127.0.0.1]'],
    ['[64:ff9b::a00:1]'], // NAT64 of 10.0.0.1
    ['[64:ff9b::7f00:1]'], // NAT64 of 127.0.0.1
    ['[64:ff9b:1::a00:1]'], // local-use NAT64
    ['[2002:a00:1::]'], // 6to4 of 10.0.0.1
    ['[2002:7f00:1::]'], // 6to4 of 127.0.0.1
    ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]'], // Teredo
    // private, CGNAT, link-local and metadata
    ['10.0.0.1'],
    ['10.255.255.255'],
    ['172.16.0.1'],
    ['172.31.255.255'],
    ['192.168.1.1'],
    ['100.64.0.1'],
    ['100.127.255.254'],
    ['100.100.100.200'],
    ['169.254.169.254'],
    ['169.254.0.1'],
    ['[fd00:ec2::254]'],
    ['[fe80::1]'],
    ['[fc00::1]'],
    ['[fec0::1]'],
    ['168.63.129.16'],
    // unspecified, broadcast, multicast, reserved, documentation
    ['0.0.0.0'],
    ['0'],
    ['0.1.2.3'],
    ['[::]'],
    ['255.255.255.255'],
    ['224.0.0.1'],
    ['239.255.255.250'],
    ['[ff02::1]'],
    ['240.0.0.1'],
    ['192.0.2.10'],
    ['198.51.100.7'],
    ['203.0.113.9'],
    ['198.18.0.1'],
    ['192.0.0.8'],
    ['[2001:db8::1]'],
    ['[100::1]'],
  ])('refuses %s', (host) => {
    expect(literalAllowed(host)).toBe(false);
  });

  it.each([
    ['93.184.215.14'],
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['[2606:4700:4700::1111]'],
    ['[2a00:1450:4007:80e::200e]'],
  ])('allows the public address %s on 80 and 443', (host) => {
    expect(literalAllowed(host, 443)).toBe(true);
    expect(literalAllowed(host, 80)).toBe(true);
  });

  it('numeric, octal, hex and short IPv4 forms are normalised to dotted decimal before the check', () => {
    expect(canonicalHost('127.1')).toBe('127.0.0.1');
    expect(canonicalHost('0x7f.1')).toBe('127.0.0.1');
    expect(canonicalHost('017700000001')).toBe('127.0.0.1');
    expect(canonicalHost('2130706433')).toBe('127.0.0.1');
    expect(canonicalHost('0251.0376.0251.0376')).toBe('169.254.169.254');
    expect(canonicalHost('[::ffff:127.0.0.1]')).toBe('[::ffff:7f00:1]');
    expect(canonicalHost('LOCALHOST')).toBe('localhost');
  });

  it('refuses a public address on a port other than 80 or 443', () => {
    expect(connectionAllowed(['93.184.215.14'], 8080, STRICT)).toBe(false);
    expect(connectionAllowed(['93.184.215.14'], 22, STRICT)).toBe(false);
  });

  it('refuses when any one of the addresses a name resolves to is not public', () => {
    expect(connectionAllowed(['93.184.215.14', '10.0.0.5'], 443, STRICT)).toBe(false);
    expect(connectionAllowed(['2606:4700:4700::1111', '::1'], 443, STRICT)).toBe(false);
    expect(connectionAllowed([], 443, STRICT)).toBe(false);
  });

  it('treats text that is not an IP address as not public', () => {
    expect(isPublicAddress('localhost')).toBe(false);
    expect(isPublicAddress('example.com')).toBe(false);
    expect(isPublicAddress('1.2.3')).toBe(false);
  });
});

describe('IMPORT_ALLOW_LOOPBACK (test-only): loopback addresses on any port, nothing else', () => {
  const LOOSE = { allowLoopback: true };
  it('allows loopback fixture servers on any port', () => {
    expect(connectionAllowed(['127.0.0.1'], 45678, LOOSE)).toBe(true);
    expect(connectionAllowed(['::1', '127.0.0.1'], 8080, LOOSE)).toBe(true);
  });
  it('still refuses private, link-local and metadata addresses', () => {
    expect(connectionAllowed(['10.0.0.1'], 80, LOOSE)).toBe(false);
    expect(connectionAllowed(['169.254.169.254'], 80, LOOSE)).toBe(false);
    expect(connectionAllowed(['127.0.0.1', '192.168.0.1'], 80, LOOSE)).toBe(false);
  });
  it('still refuses a public address on another port', () => {
    expect(connectionAllowed(['93.184.215.14'], 8080, LOOSE)).toBe(false);
  });
});
