import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { isId } from '../../common/ids/ids';
import { ParamFault, params, parseQuery, PAGING_PARAMS } from '../../common/query/query-params';
import type { PageRequest } from '../../common/paging/keyset-page';
import { boundToEpochMillis } from '../../search/filters/fields/window';
import { parseTimestampWithOffset } from '../../search/listing/conversation-filter';
import { SitePath } from '../../docs/openapi';

/** Bounds of an order (outcomes-v1 §1). */
export const ORDER_LIMITS = {
  externalId: 128,
  productId: 128,
  lines: 500,
  quantity: 1_000_000,
  amount: 1_000_000_000_000,
  conversationIds: 20,
  visitorIdMin: 8,
  visitorIdMax: 128,
  futureSkewMs: 5 * 60 * 1000,
} as const;

export const ORDER_STATUSES = ['placed', 'cancelled', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

const EXTERNAL_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A timestamp with an offset naming a real instant, to the millisecond (a finer part rounds up), or undefined. */
function instant(value: string): Date | undefined {
  const parsed = parseTimestampWithOffset(value);
  return parsed instanceof ParamFault ? undefined : new Date(boundToEpochMillis(parsed));
}

/**
 * ISO 4217 alphabetic codes: those the runtime's ICU data knows (Intl.supportedValuesOf), which
 * follows the standard's current list.
 */
export const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** The order the shop sends: every field checked, none stored unless all pass. */
export interface OrderInput {
  placedAt: Date;
  currency: string;
  total: number;
  lines: Array<{ productId: string; quantity: number; amount: number }>;
  status: OrderStatus;
  refunded: number;
  conversationIds: string[];
  /** The visitor id as sent: hashed before anything stores it (VisitorIdHasher). */
  visitorId: string | null;
}

export class OrderLineDto {
  @ApiProperty({ minLength: 1, maxLength: ORDER_LIMITS.productId, example: 'sku-42' })
  productId!: string;
  @ApiProperty({ type: 'integer', minimum: 1, maximum: ORDER_LIMITS.quantity, example: 1 })
  quantity!: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: ORDER_LIMITS.amount,
    example: 1990,
    description: "The line's amount in the currency's minor unit.",
  })
  amount!: number;
}

/** The body of PUT …/orders/{externalId} (for the OpenAPI document; parsed by parseOrderBody). */
export class PutOrderDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-20T10:15:00.000Z',
    description: 'When the order was placed: ISO 8601 with an offset, at most 5 minutes in the future.',
  })
  placedAt!: string;
  @ApiProperty({ pattern: '^[A-Z]{3}$', example: 'EUR', description: 'ISO 4217 alphabetic code.' })
  currency!: string;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: ORDER_LIMITS.amount,
    example: 1990,
    description: "In the currency's minor unit (cents). Lines need not add up to it.",
  })
  total!: number;
  @ApiProperty({ type: () => [OrderLineDto], maxItems: ORDER_LIMITS.lines })
  lines!: OrderLineDto[];
  @ApiPropertyOptional({ enum: ORDER_STATUSES, default: 'placed' })
  status?: OrderStatus;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: ORDER_LIMITS.amount,
    default: 0,
    description: 'Refunded so far, at most total.',
  })
  refunded?: number;
  @ApiPropertyOptional({
    type: [String],
    maxItems: ORDER_LIMITS.conversationIds,
    example: ['conv_4Lr0BZ9yJm2WQhV6sT1nXe'],
    description:
      'Conversations the shop knows led to the order (attribution rule 1). An input: never returned.',
  })
  conversationIds?: string[];
  @ApiPropertyOptional({
    minLength: ORDER_LIMITS.visitorIdMin,
    maxLength: ORDER_LIMITS.visitorIdMax,
    description:
      "The site tag's opaque visitor id (attribution rule 2). Personal data: stored only as a keyed hash, never returned.",
  })
  visitorId?: string;
}

const FIELDS = [
  'placedAt',
  'currency',
  'total',
  'lines',
  'status',
  'refunded',
  'conversationIds',
  'visitorId',
] as const;
const LINE_FIELDS = ['productId', 'quantity', 'amount'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const codePoints = (s: string) => [...s].length;

/** The faults of the `externalId` path segment (none when it is 1–128 of A–Z a–z 0–9 . _ : -). */
export function externalIdFaults(externalId: string): ProblemEntry[] {
  return EXTERNAL_ID.test(externalId)
    ? []
    : [
        {
          code: 'invalid_format',
          detail: 'externalId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -',
          parameter: 'externalId',
        },
      ];
}

/**
 * The order of a PUT body, every fault of the body and of `externalId` reported at once (400
 * invalid_request with pointers); values are never echoed in a fault (a visitor id is personal
 * data).
 */
export function parseOrderBody(externalId: string, raw: unknown, now = Date.now()): OrderInput {
  const faults: ProblemEntry[] = externalIdFaults(externalId);
  if (!isObject(raw)) {
    faults.push({ code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' });
    throw ApiError.invalidRequest(faults);
  }
  const fault = (pointer: string, code: string, detail: string) => faults.push({ code, detail, pointer });
  for (const key of Object.keys(raw))
    if (!(FIELDS as readonly string[]).includes(key))
      fault(`/${escape(key)}`, 'unknown_field', `${key} is not a known field.`);

  const amount = (value: unknown, pointer: string, name: string, required: boolean): number | undefined => {
    if (value === undefined) {
      if (required) fault(pointer, 'required', `${name} is required.`);
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      fault(pointer, 'invalid_type', `${name} must be an integer (minor units).`);
      return undefined;
    }
    if (value < 0 || value > ORDER_LIMITS.amount) {
      fault(pointer, 'out_of_range', `${name} must be from 0 to ${ORDER_LIMITS.amount}.`);
      return undefined;
    }
    return value;
  };

  let placedAt: Date | undefined;
  if (raw.placedAt === undefined) fault('/placedAt', 'required', 'placedAt is required.');
  else if (typeof raw.placedAt !== 'string') fault('/placedAt', 'invalid_type', 'placedAt must be a string.');
  else {
    const time = instant(raw.placedAt);
    if (time === undefined)
      fault('/placedAt', 'invalid_format', 'placedAt must be an ISO 8601 timestamp with an offset.');
    else if (time.getTime() > now + ORDER_LIMITS.futureSkewMs)
      fault('/placedAt', 'out_of_range', 'placedAt must be at most 5 minutes in the future.');
    else placedAt = time;
  }

  let currency: string | undefined;
  if (raw.currency === undefined) fault('/currency', 'required', 'currency is required.');
  else if (typeof raw.currency !== 'string') fault('/currency', 'invalid_type', 'currency must be a string.');
  else if (!/^[A-Z]{3}$/.test(raw.currency) || !CURRENCIES.has(raw.currency))
    fault('/currency', 'invalid_value', 'currency must be an ISO 4217 alphabetic code in capitals (EUR).');
  else currency = raw.currency;

  const total = amount(raw.total, '/total', 'total', true);

  const lines: OrderInput['lines'] = [];
  if (raw.lines === undefined) fault('/lines', 'required', 'lines is required ([] for none).');
  else if (!Array.isArray(raw.lines)) fault('/lines', 'invalid_type', 'lines must be an array.');
  else if (raw.lines.length > ORDER_LIMITS.lines)
    fault('/lines', 'too_long', `lines may hold at most ${ORDER_LIMITS.lines} lines.`);
  else
    raw.lines.forEach((line: unknown, i: number) => {
      const at = `/lines/${i}`;
      if (!isObject(line)) return fault(at, 'invalid_type', 'a line must be an object.');
      for (const key of Object.keys(line))
        if (!LINE_FIELDS.includes(key))
          fault(`${at}/${escape(key)}`, 'unknown_field', `${key} is not a known field.`);
      let productId: string | undefined;
      if (line.productId === undefined) fault(`${at}/productId`, 'required', 'productId is required.');
      else if (typeof line.productId !== 'string')
        fault(`${at}/productId`, 'invalid_type', 'productId must be a string.');
      else if (line.productId === '') fault(`${at}/productId`, 'too_short', 'productId must not be empty.');
      else if (codePoints(line.productId) > ORDER_LIMITS.productId)
        fault(
          `${at}/productId`,
          'too_long',
          `productId must be at most ${ORDER_LIMITS.productId} characters.`,
        );
      else productId = line.productId;
      let quantity: number | undefined;
      if (line.quantity === undefined) fault(`${at}/quantity`, 'required', 'quantity is required.');
      else if (typeof line.quantity !== 'number' || !Number.isInteger(line.quantity))
        fault(`${at}/quantity`, 'invalid_type', 'quantity must be an integer.');
      else if (line.quantity < 1 || line.quantity > ORDER_LIMITS.quantity)
        fault(`${at}/quantity`, 'out_of_range', `quantity must be from 1 to ${ORDER_LIMITS.quantity}.`);
      else quantity = line.quantity;
      const lineAmount = amount(line.amount, `${at}/amount`, 'amount', true);
      if (productId !== undefined && quantity !== undefined && lineAmount !== undefined)
        lines.push({ productId, quantity, amount: lineAmount });
    });

  let status: OrderStatus = 'placed';
  if (raw.status !== undefined) {
    if (typeof raw.status !== 'string' || !(ORDER_STATUSES as readonly string[]).includes(raw.status))
      fault('/status', 'invalid_value', `status must be one of ${ORDER_STATUSES.join(', ')}.`);
    else status = raw.status as OrderStatus;
  }

  const refunded = amount(raw.refunded, '/refunded', 'refunded', false);
  if (refunded !== undefined && total !== undefined && refunded > total)
    fault('/refunded', 'out_of_range', 'refunded must be at most total.');

  const conversationIds: string[] = [];
  if (raw.conversationIds !== undefined) {
    if (!Array.isArray(raw.conversationIds))
      fault('/conversationIds', 'invalid_type', 'conversationIds must be an array of conversation ids.');
    else if (raw.conversationIds.length > ORDER_LIMITS.conversationIds)
      fault(
        '/conversationIds',
        'too_long',
        `conversationIds may hold at most ${ORDER_LIMITS.conversationIds} ids.`,
      );
    else
      raw.conversationIds.forEach((id: unknown, i: number) => {
        if (!isId('conv', id))
          fault(`/conversationIds/${i}`, 'invalid_format', 'must be a conversation id (conv_…).');
        else if (!conversationIds.includes(id)) conversationIds.push(id);
      });
  }

  let visitorId: string | null = null;
  if (raw.visitorId !== undefined) {
    const v = raw.visitorId;
    if (typeof v !== 'string') fault('/visitorId', 'invalid_type', 'visitorId must be a string.');
    else if (codePoints(v) < ORDER_LIMITS.visitorIdMin)
      fault('/visitorId', 'too_short', `visitorId must be at least ${ORDER_LIMITS.visitorIdMin} characters.`);
    else if (codePoints(v) > ORDER_LIMITS.visitorIdMax)
      fault('/visitorId', 'too_long', `visitorId must be at most ${ORDER_LIMITS.visitorIdMax} characters.`);
    else visitorId = v;
  }

  if (faults.length) throw ApiError.invalidRequest(faults);
  return {
    placedAt: placedAt!,
    currency: currency!,
    total: total!,
    lines,
    status,
    refunded: refunded ?? 0,
    conversationIds,
    visitorId,
  };
}

/** The filters of GET …/orders (single-valued), with the paging parameters. */
export const ORDER_LIST_PARAMS = {
  ...PAGING_PARAMS,
  from: { parse: (v: string) => timestamp(v) },
  to: { parse: (v: string) => timestamp(v) },
  attributed: params.boolean(),
  conversationId: {
    parse: (v: string) => (isId('conv', v) ? v : new ParamFault('must be a conversation id (conv_…).')),
  },
  status: params.oneOf(ORDER_STATUSES),
};

function timestamp(v: string): Date | ParamFault {
  const time = instant(v);
  return time ?? new ParamFault('must be an ISO 8601 timestamp with an offset.', 'invalid_format');
}

/** What GET …/orders filters on: each absent when not given. */
export interface OrderListFilter {
  from?: Date;
  to?: Date;
  attributed?: boolean;
  conversationId?: string;
  status?: OrderStatus;
}

/** The list query: strict parameters, every fault at once. */
export function parseOrderListQuery(query: Record<string, unknown>): {
  filter: OrderListFilter;
  page: PageRequest;
} {
  const { limit = 25, cursor, ...filter } = parseQuery(query, ORDER_LIST_PARAMS);
  return { filter, page: { limit, cursor } };
}

/** The canonical text of a list filter, which its cursors bind to. */
export function orderFilterText(filter: OrderListFilter): Record<string, unknown> {
  return {
    from: filter.from?.toISOString(),
    to: filter.to?.toISOString(),
    attributed: filter.attributed,
    conversationId: filter.conversationId,
    status: filter.status,
  };
}

/** The path of a route on one order (its external id): the site's id, then its own (`:orderId`). */
export class OrderPath extends SitePath('orderId') {}
