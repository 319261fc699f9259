import { SecretBox } from './secret-box';

describe('SecretBox: secrets encrypted at rest with AES-256-GCM', () => {
  const box = new SecretBox('a-configuration-secret-of-enough-length', 'webhook-secrets');

  it('opens what it sealed, and the stored form does not contain the plaintext', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'wh_1');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'wh_1')).toBe('whsec_c2VjcmV0');
  });

  it('seals the same value differently each time (random nonce)', () => {
    expect(box.seal('same', 'wh_1')).not.toBe(box.seal('same', 'wh_1'));
  });

  it('refuses a value moved to another row, altered, or sealed under another key or purpose', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'wh_1');
    expect(() => box.open(sealed, 'wh_2')).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'), 'wh_1')).toThrow();
    expect(() =>
      new SecretBox('another-configuration-secret-of-length', 'webhook-secrets').open(sealed, 'wh_1'),
    ).toThrow();
    expect(() =>
      new SecretBox('a-configuration-secret-of-enough-length', 'other').open(sealed, 'wh_1'),
    ).toThrow();
  });
});
