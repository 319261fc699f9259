import { Module } from '@nestjs/common';
import { AttributionModule } from '../orders/orders.module';
import { ConversationRemovalRepository } from './conversation-removal.repository';

/** The set-based deletion of conversations: for the single DELETE and the deletion jobs. */
@Module({
  imports: [AttributionModule],
  providers: [ConversationRemovalRepository],
  exports: [ConversationRemovalRepository],
})
export class ConversationRemovalModule {}
