import { Module } from '@nestjs/common';
import { ConversationEvents } from '../conversations/conversation-events';
import { EventsModule } from '../events/events.module';
import { LabelRecordsRepository } from './label-records.repository';
import { LabelWriter } from './label-writer.service';
import { VocabularyController } from './vocabulary.controller';

/**
 * Labels as every process serves them: the vocabulary endpoint of taxonomy v1.1 and the label
 * writer, which stores an outcome and announces it as a conversation event. Recording sends a
 * conversation back to pending through LabelRecordsRepository itself (ConversationsModule), so
 * that conversations never import this module. The labeling process is LabelingQueueModule
 * (labeling/), registered only with WORKERS=on.
 */
@Module({
  imports: [EventsModule],
  controllers: [VocabularyController],
  providers: [LabelRecordsRepository, ConversationEvents, LabelWriter],
  exports: [LabelWriter],
})
export class LabelsModule {}
