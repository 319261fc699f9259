import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { parseFilterObject } from '../../search/listing/filter-object';
import { SCORE_NAMES, ScoreName } from '../../labels/taxonomy';
import { ConversationFilter, filterFaultsError } from '../../search/listing/conversation-filter';
import { bodyShape, checkName } from '../../views/dto/view-request';
import {
  ALERT_COMPARISONS,
  ALERT_METRICS,
  ALERT_WINDOWS,
  AlertComparison,
  AlertDefinition,
  AlertMetric,
  AlertWindow,
  DEFAULT_MIN_CONVERSATIONS,
  MAX_MIN_CONVERSATIONS,
} from '../alert.records';
import { SitePath } from '../../docs/openapi';

const FILTERS_DOC = {
  type: 'object',
  additionalProperties: true,
  description:
    "The listing's filters as exports take them (q included), without from and to: the window sets the creation time range. Not with view.",
  example: { channel: 'web', 'labels.all': ['resolution:unresolved'] },
} as const;

class AlertFieldsDto {
  @ApiPropertyOptional({
    example: 'view_3hT9aQ0cX2mR1vB8nK5wZp',
    description: 'A view of the site: the alert follows its filters. Not with filters.',
  })
  view?: string;
  @ApiPropertyOptional(FILTERS_DOC)
  filters?: Record<string, unknown>;
  @ApiPropertyOptional({
    enum: SCORE_NAMES,
    description: 'The score whose mean is watched: required with metric mean, refused with the others.',
  })
  score?: ScoreName;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_MIN_CONVERSATIONS,
    default: DEFAULT_MIN_CONVERSATIONS,
    description:
      'Fewer conversations than this in the denominator (share) or with the score (mean): insufficient_data. A count alert never is.',
  })
  minConversations?: number;
  @ApiPropertyOptional({
    default: true,
    description: 'A disabled alert is not evaluated; it keeps its last state.',
  })
  enabled?: boolean;
}

/** The body of POST …/alerts (for the OpenAPI document; parsed by parseAlertBody). */
export class CreateAlertDto extends AlertFieldsDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Unresolved rate jumps' }) name!: string;
  @ApiProperty({ enum: ALERT_METRICS }) metric!: AlertMetric;
  @ApiProperty({ enum: ALERT_WINDOWS, description: 'The conversations created in this last period.' })
  window!: AlertWindow;
  @ApiProperty({ enum: ALERT_COMPARISONS }) comparison!: AlertComparison;
  @ApiProperty({
    type: 'number',
    example: 0.3,
    description:
      'count: 0 or more; share and mean: 0 to 1. Firing when the value is strictly above (below) it.',
  })
  threshold!: number;
}

/** The body of PATCH …/alerts/{alertId}: only the fields sent change (view or filters replaces the other). */
export class UpdateAlertDto extends AlertFieldsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) name?: string;
  @ApiPropertyOptional({ enum: ALERT_METRICS }) metric?: AlertMetric;
  @ApiPropertyOptional({ enum: ALERT_WINDOWS }) window?: AlertWindow;
  @ApiPropertyOptional({ enum: ALERT_COMPARISONS }) comparison?: AlertComparison;
  @ApiPropertyOptional({ type: 'number' }) threshold?: number;
}

/** The fields a body gave, parsed; `view` and `filter` are never both set. */
export type AlertInput = Partial<Omit<AlertDefinition, 'viewId' | 'filter'>> & {
  view?: string;
  filter?: ConversationFilter;
};

const FIELDS = [
  'name',
  'view',
  'filters',
  'metric',
  'score',
  'window',
  'comparison',
  'threshold',
  'minConversations',
  'enabled',
];
const REQUIRED = ['name', 'metric', 'window', 'comparison', 'threshold'];

const oneOf = <T extends string>(
  values: readonly T[],
  value: unknown,
  pointer: string,
  faults: ProblemEntry[],
): T | undefined => {
  if ((values as readonly unknown[]).includes(value)) return value as T;
  faults.push({ code: 'invalid_value', detail: `must be one of ${values.join(', ')}.`, pointer });
  return undefined;
};

/**
 * The fields of a POST (`partial` false: name, metric, window, comparison and threshold required)
 * or PATCH body, every fault listed together. `filters` are validated as exports' (same pointers
 * and codes) and may not hold `from` or `to` (invalid_filter): the window is the time range.
 */
export function parseAlertBody(raw: unknown, partial: boolean): AlertInput {
  const { body, faults } = bodyShape(raw, FIELDS);
  const filterFaults: ProblemEntry[] = [];
  const input: AlertInput = {};
  if (!partial)
    for (const name of REQUIRED)
      if (body[name] === undefined)
        faults.push({ code: 'required', detail: `${name} is required.`, pointer: `/${name}` });

  if (body.name !== undefined) input.name = checkName(body.name, faults);
  if (body.metric !== undefined) input.metric = oneOf(ALERT_METRICS, body.metric, '/metric', faults);
  if (body.window !== undefined) input.window = oneOf(ALERT_WINDOWS, body.window, '/window', faults);
  if (body.comparison !== undefined)
    input.comparison = oneOf(ALERT_COMPARISONS, body.comparison, '/comparison', faults);
  if (body.score !== undefined) input.score = oneOf(SCORE_NAMES, body.score, '/score', faults);
  if (body.threshold !== undefined) {
    if (typeof body.threshold !== 'number' || !Number.isFinite(body.threshold))
      faults.push({ code: 'invalid_type', detail: 'threshold must be a number.', pointer: '/threshold' });
    else input.threshold = body.threshold;
  }
  if (body.minConversations !== undefined) {
    const n = body.minConversations;
    if (typeof n !== 'number' || !Number.isInteger(n))
      faults.push({
        code: 'invalid_type',
        detail: 'minConversations must be an integer.',
        pointer: '/minConversations',
      });
    else if (n < 0 || n > MAX_MIN_CONVERSATIONS)
      faults.push({
        code: 'out_of_range',
        detail: `minConversations must be from 0 to ${MAX_MIN_CONVERSATIONS}.`,
        pointer: '/minConversations',
      });
    else input.minConversations = n;
  }
  if (body.enabled !== undefined) {
    if (typeof body.enabled !== 'boolean')
      faults.push({ code: 'invalid_type', detail: 'enabled must be a boolean.', pointer: '/enabled' });
    else input.enabled = body.enabled;
  }

  if (body.view !== undefined && body.filters !== undefined)
    faults.push({
      code: 'invalid_value',
      detail: 'give view or filters, not both: an alert follows a view or has filters of its own.',
      pointer: '/view',
    });
  if (body.view !== undefined) {
    if (typeof body.view !== 'string')
      faults.push({ code: 'invalid_type', detail: 'view must be a view id (view_…).', pointer: '/view' });
    else input.view = body.view;
  }
  if (body.filters !== undefined) {
    const filters = body.filters;
    if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) {
      faults.push({ code: 'invalid_type', detail: 'filters must be an object.', pointer: '/filters' });
    } else {
      for (const name of ['from', 'to'])
        if ((filters as Record<string, unknown>)[name] !== undefined)
          filterFaults.push({
            code: 'invalid_filter',
            detail: `an alert's window sets the creation time range; ${name} is not taken here.`,
            pointer: `/filters/${name}`,
          });
      try {
        input.filter = parseFilterObject(filters as Record<string, unknown>, '/filters');
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        (error.code === 'invalid_filter' ? filterFaults : faults).push(...(error.errors ?? []));
      }
    }
  }
  const error = filterFaultsError(faults, filterFaults);
  if (error) throw error;
  return input;
}

/**
 * Faults of a whole definition (a created alert, or one after a PATCH): `score` with mean only and
 * required with it; the threshold in the metric's range (0 or more for count, 0 to 1 otherwise).
 */
export function definitionFaults(
  def: Pick<AlertDefinition, 'metric' | 'score' | 'threshold'>,
): ProblemEntry[] {
  const faults: ProblemEntry[] = [];
  if (def.metric === 'mean' && def.score === null)
    faults.push({ code: 'required', detail: 'score is required with metric mean.', pointer: '/score' });
  if (def.metric !== 'mean' && def.score !== null)
    faults.push({
      code: 'invalid_value',
      detail: 'score is taken with metric mean only.',
      pointer: '/score',
    });
  if (def.metric === 'count' ? def.threshold < 0 : def.threshold < 0 || def.threshold > 1)
    faults.push({
      code: 'out_of_range',
      detail:
        def.metric === 'count'
          ? 'a count threshold is 0 or more.'
          : `a ${def.metric} threshold is from 0 to 1.`,
      pointer: '/threshold',
    });
  return faults;
}

/** The path of a route on one alert: the site's id, then its own (`:alertId`). */
export class AlertPath extends SitePath('alertId') {}
