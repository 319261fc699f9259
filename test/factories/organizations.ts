import type { INestApplicationContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { SeedOptions, SeedService } from '../../src/conversations/seed/seed.service';
import { CreatedOrganization, OrganizationsService } from '../../src/organizations/organizations.service';
import { SitesService } from '../../src/sites/sites.service';
import type { TestApp } from '../setup/test-app';

/** An organization as a test holds it: created, with the Authorization header of its API key. */
export type Org = CreatedOrganization & { auth: { Authorization: string } };

/** A fresh organization with one site and one API key; tests never share organizations. */
export async function createOrganization(
  app: INestApplicationContext,
  overrides: { origin?: string } = {},
): Promise<Org> {
  const suffix = randomBytes(3).toString('hex');
  const created = await app.get(OrganizationsService).create({
    name: `Org ${suffix}`,
    siteName: `Shop ${suffix}`,
    origin: overrides.origin ?? `https://shop-${suffix}.example`,
  });
  return { ...created, auth: { Authorization: `Bearer ${created.apiKey.secret}` } };
}

/** A fresh organization whose site holds the conversations SeedService writes with `seed`. */
export async function seededOrganization(
  app: INestApplicationContext,
  seed: Omit<SeedOptions, 'siteId' | 'organizationId'>,
): Promise<Org> {
  const org = await createOrganization(app);
  await app.get(SeedService).seed({ siteId: org.site.id, organizationId: org.organization.id, ...seed });
  return org;
}

/** POST /api/v1/sites with the organization's API key, ready for `.send(body)`. */
export const postSite = (t: TestApp, org: Org) => t.http().post('/api/v1/sites').set(org.auth);

/** GET `path` with the organization's API key, ready for `.expect(status)`. */
export const getAs = (t: TestApp, org: Pick<Org, 'auth'>, path: string) => t.http().get(path).set(org.auth);

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
