import { Module } from '@nestjs/common';
import { ConversationRemovalRepository } from './conversation-removal.repository';

/** The set-based deletion of conversations: for the single DELETE and the deletion jobs. */
@Module({ providers: [ConversationRemovalRepository], exports: [ConversationRemovalRepository] })
export class ConversationRemovalModule {}
