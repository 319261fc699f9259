import { addRevenue, emptyTally } from '../commerce-metrics';
import type { GroupFigure } from './stats-groups';

/**
 * The commerce metrics of each group (outcomes-v1.md §4, §5): its converted conversations, and
 * the orders credited to its conversations and not cancelled, per currency. Each matching
 * conversation's orders are summed per currency by a subquery on the index of credited orders
 * (`currency:orders:gross:refunded:net`, `;` between currencies) and the group's are joined into
 * one text, summed exactly (BigInt) here.
 */
export const METRICS_FIGURE: GroupFigure = {
  select: (query) => {
    const metrics = query.metrics ?? [];
    if (!metrics.length) return [];
    return [
      `count(*) FILTER (WHERE r.converted)::bigint AS metrics_converted`,
      ...(metrics.includes('revenue')
        ? [
            `string_agg((SELECT string_agg(concat_ws(':', x.currency, x.n, x.gross, x.refunded, x.net), ';')
               FROM (SELECT o.currency, count(*) AS n, sum(o.total) AS gross, sum(o.refunded) AS refunded,
                   sum(o.net) AS net
                 FROM orders o WHERE o.credited_conversation_id = r.id AND o.status <> 'cancelled'
                 GROUP BY o.currency) x), ';') AS metrics_revenue`,
          ]
        : []),
    ];
  },
  read: (query, row, into) => {
    if (!query.metrics?.length) return;
    const tally = { ...emptyTally(), total: into.total, converted: Number(row.metrics_converted) };
    const text = row.metrics_revenue;
    if (typeof text === 'string' && text)
      for (const entry of text.split(';')) {
        const [currency, n, gross, refunded, net] = entry.split(':');
        addRevenue(tally, currency, Number(n), BigInt(gross), BigInt(refunded), BigInt(net));
      }
    into.metrics = tally;
  },
};
