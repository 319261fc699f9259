import { generateSecret, isWellFormedSecret } from './api-key-secret';

describe('API key secrets', () => {
  it('are well formed when generated, and distinct', () => {
    const secrets = Array.from({ length: 50 }, generateSecret);
    expect(secrets.every(isWellFormedSecret)).toBe(true);
    expect(new Set(secrets).size).toBe(50);
    expect(secrets[0]).toMatch(/^sak_[0-9A-Za-z]{38}$/);
  });

  it('any single-character change breaks the checksum or the shape', () => {
    const secret = generateSecret();
    for (let i = 4; i < secret.length; i++) {
      const replacement = secret[i] === 'Z' ? 'Y' : 'Z';
      expect(isWellFormedSecret(secret.slice(0, i) + replacement + secret.slice(i + 1))).toBe(false);
    }
    expect(isWellFormedSecret(secret + 'a')).toBe(false);
    expect(isWellFormedSecret(secret.replace('sak_', 'sk_x'))).toBe(false);
  });
});
