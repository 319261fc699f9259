import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { TranscriptTexts } from '../search/text-query/highlights';
import type { TextScope } from '../search/text-query/text-query';

/** The message roles `q.in` searches. */
const ROLES_OF_SCOPE: Record<TextScope, string[]> = {
  all: ['shopper', 'agent', 'system'],
  shopper: ['shopper'],
  agent: ['agent'],
};

/**
 * The stored texts a page's highlights are computed from (the source of truth whatever the
 * listing engine): each conversation's language and title, and its messages of the roles `scope`
 * searches, oldest first (as GET of the conversation lists them). One statement for the page.
 */
@Injectable()
export class TranscriptTextsRepository {
  constructor(private readonly db: DataSource) {}

  async ofPage(siteId: string, ids: string[], scope: TextScope): Promise<TranscriptTexts[]> {
    if (ids.length === 0) return [];
    return this.db.query(
      `SELECT c.id AS "conversationId", c.language, c.title,
         coalesce((
           SELECT json_agg(json_build_object('id', m.id, 'role', m.role, 'blocks', m.blocks)
                           ORDER BY m.created_at, m.position)
           FROM messages m WHERE m.conversation_id = c.id AND m.role = ANY($3::text[])
         ), '[]') AS messages
       FROM conversations c
       WHERE c.site_id = $1 AND c.id = ANY($2::text[])`,
      [siteId, ids, ROLES_OF_SCOPE[scope]],
    );
  }
}
