import { Process, Processor } from '@nestjs/bull';
import { Logger } from '@nestjs/common';
import { describeOpenSearchError } from '../opensearch/opensearch-client';
import { DrainResult, SearchIndexer } from './search-indexer.service';
import { DRAIN_JOB, SEARCH_MIRROR_QUEUE } from './search-mirror.scheduler';

/** Runs the drain jobs, one at a time per process. */
@Processor(SEARCH_MIRROR_QUEUE)
export class SearchMirrorProcessor {
  private readonly logger = new Logger(SearchMirrorProcessor.name);
  private failing = false;
  private warnedNoIndex = false;

  constructor(private readonly indexer: SearchIndexer) {}

  @Process({ name: DRAIN_JOB, concurrency: 1 })
  async drain(): Promise<DrainResult | null> {
    try {
      const result = await this.indexer.drain();
      if (this.failing) this.logger.log('search mirror: OpenSearch answers again, draining');
      this.failing = false;
      if (result.taken > 0 && result.targets.length === 0 && !this.warnedNoIndex) {
        this.logger.warn(
          'search mirror: no conversations index in OpenSearch yet; run `npm run cli -- search:reindex`. The outbox waits.',
        );
        this.warnedNoIndex = true;
      }
      return result;
    } catch (error) {
      // Rows stay in the outbox; the next interval tries again. Logged once per outage.
      if (!this.failing)
        this.logger.warn(`search mirror: drain failed (${describeOpenSearchError(error)}); outbox rows kept`);
      this.failing = true;
      return null;
    }
  }
}
