import { Module } from '@nestjs/common';
import { SitesModule } from '../sites/sites.module';
import { EventFeedJobs } from './event-feed-jobs';
import { EventSequencer } from './event-sequencer';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { EventsWriter } from './events.writer';
import { EventsController } from './events.controller';

/**
 * The change feed. EventsWriter is what every write path imports to append its events in its
 * own transaction (recording, labels, page imports, exports); GET /api/v1/events
 * (EventsRoutesModule) reads them.
 */
@Module({
  imports: [SitesModule],
  providers: [EventsWriter, EventsRepository, EventSequencer, EventsService],
  exports: [EventsWriter, EventSequencer, EventsRepository, EventsService],
})
export class EventsModule {}

/** The feed's background jobs (positioning, retention): registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [EventsModule], providers: [EventFeedJobs] })
export class EventFeedJobsModule {}

/** `GET /api/v1/events` (the HTTP app only). */
@Module({ imports: [EventsModule], controllers: [EventsController] })
export class EventsRoutesModule {}
