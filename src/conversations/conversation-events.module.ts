import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { ConversationEvents } from './conversation-events';

/** ConversationEvents, for every write path that announces a conversation change in its transaction. */
@Module({ imports: [EventsModule], providers: [ConversationEvents], exports: [ConversationEvents] })
export class ConversationEventsModule {}
