import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LabelRecordsRepository } from './label-records.repository';
import { LabelWriter } from './label-writer.service';
import { VocabularyController } from './vocabulary.controller';

/**
 * Labels as every process needs them: taxonomy v1.1 and its vocabulary endpoint, and the
 * label-record writer (recording returns a conversation to pending; the labeling queue stores
 * outcomes). The labeling queue itself is LabelingQueueModule, registered only with WORKERS=on.
 */
@Module({
  imports: [EventsModule],
  controllers: [VocabularyController],
  providers: [LabelRecordsRepository, LabelWriter],
  exports: [LabelWriter],
})
export class LabelsModule {}
