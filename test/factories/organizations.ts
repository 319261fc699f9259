import type { INestApplicationContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { CreatedOrganization, OrganizationsService } from '../../src/organizations/organizations.service';
import { SitesService } from '../../src/sites/sites.service';

/** A fresh organization with one site and one API key; tests never share organizations. */
export async function createOrganization(
  app: INestApplicationContext,
  overrides: { origin?: string } = {},
): Promise<CreatedOrganization & { auth: { Authorization: string } }> {
  const suffix = randomBytes(3).toString('hex');
  const created = await app.get(OrganizationsService).create({
    name: `Org ${suffix}`,
    siteName: `Shop ${suffix}`,
    origin: overrides.origin ?? `https://shop-${suffix}.example`,
  });
  return { ...created, auth: { Authorization: `Bearer ${created.apiKey.secret}` } };
}

export async function createSite(
  app: INestApplicationContext,
  organizationId: string,
  origin = `https://other-${randomBytes(3).toString('hex')}.example`,
) {
  return app.get(SitesService).create(organizationId, { name: 'Another shop', origin });
}

export async function createApiKey(
  app: INestApplicationContext,
  organizationId: string,
  options: { expiresAt?: Date } = {},
) {
  return app.get(ApiKeysService).create({ organizationId, expiresAt: options.expiresAt ?? null });
}
