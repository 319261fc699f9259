import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LabelRecordsRepository } from '../labels/label-records.repository';
import { ConversationEvents } from './conversation-events';
import { LabelWriter } from './label-writer.service';
import { VocabularyController } from './vocabulary.controller';

/**
 * Labels as every process needs them: the vocabulary endpoint of taxonomy v1.1 (src/labels), the
 * label-record writer (recording returns a conversation to pending; the labeling queue stores
 * outcomes) and the conversation events both announce their changes with. The labeling queue
 * itself is LabelingQueueModule, registered only with WORKERS=on.
 */
@Module({
  imports: [EventsModule],
  controllers: [VocabularyController],
  providers: [LabelRecordsRepository, ConversationEvents, LabelWriter],
  exports: [LabelWriter, ConversationEvents],
})
export class LabelsModule {}
