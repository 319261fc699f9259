import { Module } from '@nestjs/common';
import { ConversationEventsModule } from '../conversations/conversation-events.module';
import { LabelRecordsModule } from '../labels/label-records.module';
import { LabelWriter } from './label-writer.service';
import { VocabularyController } from './vocabulary.controller';

/**
 * The label writer, which stores an outcome and announces it as a conversation event. Recording
 * sends a conversation back to pending through LabelRecordsRepository itself (LabelRecordsModule),
 * so that conversations never import this module. The vocabulary endpoint of taxonomy v1.1 is
 * LabelsRoutesModule; the labeling process is LabelingQueueModule (labeling/), registered only
 * with WORKERS=on.
 */
@Module({
  imports: [LabelRecordsModule, ConversationEventsModule],
  providers: [LabelWriter],
  exports: [LabelWriter],
})
export class LabelsModule {}

/** `GET /api/v1/labels/vocabulary` (the HTTP app only). */
@Module({ controllers: [VocabularyController] })
export class LabelsRoutesModule {}
