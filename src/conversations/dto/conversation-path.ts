import { SitePath } from '../../docs/openapi';

/** The path of a route on one conversation: the site's id, then its own (`:id`). */
export class ConversationPath extends SitePath('id') {}
