import { beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { NoDatabase } from '../../../test/setup/no-database';
import type { AppConfig } from '../../config/app-config';
import { loadConfig } from '../../config/config';
import { ConfigModule } from '../../config/config.module';
import { SearchMirrorModule } from '../search-mirror.module';
import { SearchModule } from '../search.module';
import { StatsEnginesModule } from '../stats/stats-engines.module';
import { OpenSearchClients } from './opensearch-clients';
import { OPENSEARCH_BULK_CLIENT } from './opensearch.providers';

const configOf = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }) as AppConfig;

/** The engines' and the mirror's modules of an application, without controllers or workers. */
const appOf = (config: AppConfig) =>
  Test.createTestingModule({
    imports: [
      ConfigModule.forConfig(config),
      NoDatabase,
      SearchModule,
      StatsEnginesModule,
      SearchMirrorModule.register(config, { processors: false, controllers: false }),
    ],
  }).compile();

describe("the OpenSearch clients are the application's, one provider for every module", () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('gives the listing, the statistics and the mirror the same clients', async () => {
    const config = configOf({ SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: 'http://127.0.0.1:9' });
    const app = await appOf(config);
    const listing = app.select(SearchModule).get(OpenSearchClients);
    expect(app.select(StatsEnginesModule).get(OpenSearchClients)).toBe(listing);
    expect(app.get(OPENSEARCH_BULK_CLIENT)).toBe(listing.bulk());
    await app.close();
  });

  it('makes no client without OPENSEARCH_URL, and refuses to', async () => {
    const app = await appOf(configOf({}));
    const clients = app.get(OpenSearchClients);
    expect(() => clients.search()).toThrow(/OPENSEARCH_URL/);
    await app.close();
  });
});
