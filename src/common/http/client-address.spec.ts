import { clientAddress } from './client-address';

describe('clientAddress', () => {
  it('unwraps IPv4-mapped IPv6, keeps IPv6 and unparsable text, the same on every call', () => {
    for (let i = 0; i < 2; i++) {
      expect(clientAddress({ ip: '::ffff:127.0.0.1' })).toBe('127.0.0.1');
      expect(clientAddress({ ip: '2001:db8::1' })).toBe('2001:db8::1');
      expect(clientAddress({ ip: 'not an address' })).toBe('not an address');
      expect(clientAddress({ socket: { remoteAddress: '::ffff:10.0.0.2' } })).toBe('10.0.0.2');
      expect(clientAddress({})).toBe('unknown');
    }
  });

  it('stays right past the number of addresses it remembers', () => {
    for (let i = 0; i < 3000; i++) {
      const v4 = `10.${(i >> 8) & 255}.${i & 255}.1`;
      expect(clientAddress({ ip: `::ffff:${v4}` })).toBe(v4);
    }
    expect(clientAddress({ ip: '::ffff:127.0.0.1' })).toBe('127.0.0.1');
  });
});
