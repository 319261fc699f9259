import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';

/** One answer of the API as a test received it. */
export interface Exchange {
  method: string;
  /** The path sent, without the query string. */
  path: string;
  status: number;
  /** The Content-Type header, if any. */
  contentType: string | undefined;
  /** The body as supertest parsed it (JSON media types) or its text. */
  body: unknown;
  /** Whether the answer had a body at all. */
  hasBody: boolean;
}

/** What the document calls an operation: a method on a path template. */
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  /** Literal segments: the more, the more specific (`…/conversations/stats` before `…/{id}`). */
  literals: number;
  operations: Map<string, Operation>;
}

/**
 * The document's component schemas are registered in Ajv as the definitions of this schema, every
 * `#/components/schemas/X` reference rewritten to `openapi.json#/definitions/X`; a response schema
 * is compiled alone, its references then resolving there.
 */
const DOCUMENT_ID = 'openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const PROBLEM_MEDIA = 'application/problem+json';
const PROBLEM = { $ref: `${DOCUMENT_ID}#/definitions/Problem` };

/**
 * Answers under /api/v1 that the document rightly leaves out, each with why:
 * - the document itself (GET /api/v1/openapi.json) is not an operation of the API;
 * - a method a path does not support is a plain-text 405 with Allow (contract-v1 "Site
 *   operations"; the document's description says so), on any documented path.
 * Outside /api/v1 (health, metrics, the error pages, /docs) nothing is in the document.
 */
const NOT_OPERATIONS = new Set(['GET /api/v1/openapi.json']);
const UNSUPPORTED_METHOD = 405;

const isJson = (media: string) => media === 'application/json' || media.endsWith('+json');

/**
 * Checks answers against an OpenAPI 3.0 document: the operation (method and path template), the
 * status, the media type, and the body against the response's schema (Ajv, every error). An
 * object schema that lists its properties is read as listing all of them (additionalProperties
 * false unless it says otherwise), so a field the document does not name is a violation too.
 * Schemas are compiled the first time an answer needs them.
 */
export class ResponseContract {
  private readonly ajv: Ajv;
  private readonly paths: PathTemplate[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: OpenAPIObject) {
    const closed = JSON.stringify(closedObjects(structuredClone(document)));
    const { components, paths } = JSON.parse(
      closed.replaceAll('"#/components/schemas/', `"${DOCUMENT_ID}#/definitions/`),
    ) as OpenAPIObject;
    this.ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(this.ajv);
    // OpenAPI's annotations beside JSON Schema's (nullable is Ajv's own).
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator']);
    // Not checked against the JSON Schema meta-schema here: test/e2e/openapi.e2e-spec.ts validates the document.
    this.ajv.addSchema(
      { $id: DOCUMENT_ID, definitions: components?.schemas ?? {} },
      undefined,
      undefined,
      false,
    );
    this.paths = Object.entries(paths)
      .map(([template, item]) => ({
        template,
        pattern: new RegExp(
          `^${template
            .split('/')
            .map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
            .join('/')}/?$`,
          'i', // Express matches paths case-insensitively, with an optional trailing slash
        ),
        literals: template.split('/').filter((s) => s && !s.startsWith('{')).length,
        operations: new Map(
          METHODS.filter((m) => (item as Record<string, unknown>)[m]).map((m) => [
            m.toUpperCase(),
            (item as Record<string, Operation>)[m],
          ]),
        ),
      }))
      .sort((a, b) => b.literals - a.literals);
  }

  /** What the document says is wrong with the answer, or undefined when it allows it. */
  violation(exchange: Exchange): string | undefined {
    const { method, path, status } = exchange;
    if (!/^\/api\/v1\//i.test(path) || NOT_OPERATIONS.has(`${method} ${path}`)) return undefined;
    const said = (what: string) => `${method} ${path} answered ${status}: ${what}`;
    const route = this.paths.find((p) => p.pattern.test(path));
    const operation =
      route?.operations.get(method) ?? (method === 'HEAD' ? route?.operations.get('GET') : undefined);
    if (!route || !operation) {
      // No operation serves it: a 404 not_found when no route does, a plain 405 for a method the
      // path does not support; or an error of what runs before routing (the body's parsing: 400,
      // 413, 415). Every error under /api/v1 but the 405 is a problem document.
      if (route && status === UNSUPPORTED_METHOD) return undefined;
      if (status < 400)
        return said(
          route
            ? `the document has no operation ${method} ${route.template}`
            : 'no operation of the document serves this path',
        );
      const problem = this.bodyViolation(exchange, PROBLEM_MEDIA, 'Problem', () => PROBLEM);
      return problem && said(`not a problem document:${problem}`);
    }
    const where = `${method} ${route.template}`;
    const response = operation.responses[String(status)];
    if (!response)
      return said(
        `${where} documents no ${status} (it documents ${Object.keys(operation.responses).join(', ')})`,
      );
    if (!response.content)
      return exchange.hasBody ? said(`${where} documents ${status} without a body`) : undefined;
    const media = mediaType(exchange);
    const content = response.content[media];
    if (!content)
      return said(
        `${where} ${status} is documented as ${Object.keys(response.content).join(', ')}, not "${media}"`,
      );
    if (method === 'HEAD' || !isJson(media) || !content.schema) return undefined;
    const problem = this.bodyViolation(exchange, media, `${where} ${status} ${media}`, () => content.schema!);
    return problem && said(`${where} ${status} ${media}:${problem}`);
  }

  /** The faults of the body against `schema` (compiled once, under `key`), its media type first. */
  private bodyViolation(
    exchange: Exchange,
    media: string,
    key: string,
    schema: () => object,
  ): string | undefined {
    if (mediaType(exchange) !== media) return ` not ${media} but "${mediaType(exchange)}"`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema());
      this.compiled.set(key, validate);
    }
    return validate(exchange.body) ? undefined : describeErrors(validate.errors ?? []);
  }
}

const mediaType = (exchange: Exchange) => exchange.contentType?.split(';')[0].trim().toLowerCase() ?? '';

/** `schema` accepting `fields` (any value) beside its own properties. */
/** Ajv's errors as `/pointer: reason (schema path)`, one a line, the first 20. */
function describeErrors(errors: ErrorObject[]): string {
  const more = errors.length > 20 ? `\n  … and ${errors.length - 20} more` : '';
  return errors
    .slice(0, 20)
    .map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"`
          : e.keyword === 'enum'
            ? ` ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`
            : '';
      const schema = decodeURIComponent(e.schemaPath).replace(
        `${DOCUMENT_ID}#/definitions/`,
        '#/components/schemas/',
      );
      return `\n  ${e.instancePath || '(the body)'}: ${e.message}${extra} (${schema})`;
    })
    .join('')
    .concat(more);
}

/**
 * Every object schema that lists properties and says nothing of others gets
 * additionalProperties: false: the answer may hold no field the document does not name.
 */
function closedObjects(node: unknown): unknown {
  if (Array.isArray(node)) node.forEach(closedObjects);
  else if (node && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' && schema.properties && schema.additionalProperties === undefined)
      schema.additionalProperties = false;
    Object.values(schema).forEach(closedObjects);
  }
  return node;
}
