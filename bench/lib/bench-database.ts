import type { INestApplicationContext } from '@nestjs/common';
import { dropDatabase, prepareDatabase } from '../../src/database/data-source';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { DEFAULT_DATABASE_URL } from './bench-env';

/**
 * A database of the bench's own, `name` on the server of DATABASE_URL, dropped if it was left
 * behind and migrated afresh. Returns its URL (the bench drops it at the end).
 */
export async function freshBenchDatabase(
  env: Record<string, string | undefined>,
  name: string,
  log: (message: string) => void,
): Promise<string> {
  const url = new URL(env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  log(`database ${name} (recreated)`);
  await dropDatabase(databaseUrl).catch(() => undefined);
  await prepareDatabase(databaseUrl);
  return databaseUrl;
}

/** The organization a bench writes into, with its one site. */
export function createBenchOrganization(app: INestApplicationContext) {
  return app.get(OrganizationsService).create({
    name: 'Bench',
    siteName: 'Bench shop',
    origin: 'https://bench-shop.example',
  });
}
