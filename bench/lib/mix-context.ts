import type { DataSource } from 'typeorm';
import type { MixContext } from '../query-mix';

/** What the mix needs about the benched site: its agents by conversation count, its newest conversation. */
export async function mixContext(dataSource: DataSource, siteId: string): Promise<MixContext> {
  const agents: Array<{ agent_id: string }> = await dataSource.query(
    'SELECT agent_id FROM conversations WHERE site_id = $1 GROUP BY agent_id ORDER BY count(*) DESC, agent_id',
    [siteId],
  );
  const [{ newest }] = await dataSource.query(
    'SELECT max(created_at) AS newest FROM conversations WHERE site_id = $1',
    [siteId],
  );
  if (!agents.length || !newest)
    throw new Error(`site ${siteId} has no conversations: run npm run bench:setup first`);
  return { siteId, agents: agents.map((a) => a.agent_id), newest };
}
