import SwaggerParser from '@apidevtools/swagger-parser';
import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ERROR_CODES } from '../../src/common/errors/error-codes';
import { LISTING_PARAMS } from '../../src/conversations/dto/listing-query';
import { ApiProblems, servedRoutes, ServedRoute } from '../../src/docs/openapi';
import { conversationBody, recordConversation } from '../factories/conversations';
import { createOrganization, getAs, postSite } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';
import { CONTRACT_FILTER_PARAMETERS } from '../factories/contract-filters';
import { Exchange, ResponseContract } from '../support/response-contract';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is plain JSON read field by field */
type Doc = any;

const OPENAPI_JSON = '/api/v1/openapi.json';
const LISTING = '/api/v1/sites/{siteId}/conversations';

/** The listing's query parameters, as contract-v1 lists them (its 17 rows; score rows name two each). */
const CONTRACT_LISTING_PARAMETERS = [...CONTRACT_FILTER_PARAMETERS, 'limit', 'cursor', 'count'];

/** What the API serves under /api/v1 that is not an operation of the API: the document itself. */
const NOT_OPERATIONS = new Set([`GET ${OPENAPI_JSON}`]);

function apiRoutes(t: TestApp): ServedRoute[] {
  return servedRoutes(t.app).filter(
    (r) => r.path.startsWith('/api/v1/') && !NOT_OPERATIONS.has(`${r.method} ${r.path}`),
  );
}

function operation(doc: Doc, method: string, path: string): any {
  return doc.paths?.[path]?.[method.toLowerCase()];
}

function successStatuses(op: any): number[] {
  return Object.keys(op?.responses ?? {})
    .filter((s) => /^2\d\d$/.test(s))
    .map(Number);
}

function operations(doc: Doc): Array<{ method: string; path: string; op: any }> {
  return Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
      .filter((m) => item[m])
      .map((m) => ({ method: m.toUpperCase(), path, op: item[m] })),
  );
}

/** Operations without a summary, a tag, the API key, or a success response with a schema (204 aside). */
/** A file download (an export): every media type of the answer is a binary string. */
function isFile(response: any): boolean {
  const media = Object.values(response.content ?? {}) as any[];
  return media.length > 0 && media.every((m) => m.schema?.type === 'string' && m.schema?.format === 'binary');
}

function operationFaults(doc: Doc): string[] {
  const faults: string[] = [];
  for (const { method, path, op } of operations(doc)) {
    const key = `${method} ${path}`;
    if (!op.summary) faults.push(`${key}: no summary`);
    if (!op.tags?.length) faults.push(`${key}: no tag`);
    if (!(op.security ?? []).some((s: object) => 'apiKey' in s)) faults.push(`${key}: no apiKey security`);
    const successes = successStatuses(op);
    if (!successes.length) faults.push(`${key}: no success response`);
    for (const status of successes.filter((s) => s !== 204))
      if (!op.responses[status].content?.['application/json']?.schema && !isFile(op.responses[status]))
        faults.push(`${key}: ${status} has no schema`);
  }
  return faults;
}

/** Operations missing a problem every API call can give (ApiProblems adds them all). */
function commonProblemFaults(doc: Doc): string[] {
  const faults: string[] = [];
  for (const { method, path, op } of operations(doc)) {
    for (const [status, code] of [
      ['401', 'unauthorized'],
      ['429', 'rate_limited'],
      ['500', 'internal_error'],
      ['503', 'service_unavailable'],
    ])
      if (!op.responses[status]?.content?.['application/problem+json']?.examples?.[code])
        faults.push(`${method} ${path}: no ${status} ${code}`);
    if (!op.responses['429']?.headers?.['Retry-After'])
      faults.push(`${method} ${path}: 429 without Retry-After`);
  }
  return faults;
}

/** Writes without a documented, non-empty JSON body schema or without the body problems. */
function bodyFaults(doc: Doc): string[] {
  const faults: string[] = [];
  for (const { method, path, op } of operations(doc)) {
    if (!['POST', 'PUT', 'PATCH'].includes(method)) continue;
    // An action that reads no body (ApiNoRequestBody) says so; it must then document none.
    if (op['x-no-request-body'] === true) {
      if (op.requestBody) faults.push(`${method} ${path}: x-no-request-body with a request body`);
      continue;
    }
    const ref = op.requestBody?.content?.['application/json']?.schema?.$ref as string | undefined;
    const schema = ref && doc.components.schemas[ref.split('/').pop()!];
    if (!schema || !Object.keys(schema.properties ?? {}).length)
      faults.push(`${method} ${path}: empty body schema`);
    for (const status of ['400', '413', '415'])
      if (!op.responses[status]) faults.push(`${method} ${path}: no ${status}`);
  }
  return faults;
}

/** Served /api/v1 routes with no operation of the same method and path. */
function undocumentedRoutes(t: TestApp, doc: Doc): string[] {
  return apiRoutes(t)
    .filter((r) => !operation(doc, r.method, r.path))
    .map((r) => `${r.method} ${r.path}`);
}

/** Served routes whose handler's default status is not among the operation's success statuses. */
function wrongSuccessStatuses(t: TestApp, doc: Doc): string[] {
  return apiRoutes(t)
    .filter((r) => r.defaultStatus !== undefined)
    .filter((r) => !successStatuses(operation(doc, r.method, r.path)).includes(r.defaultStatus!))
    .map(
      (r) =>
        `${r.method} ${r.path}: answers ${r.defaultStatus}, documented ${successStatuses(operation(doc, r.method, r.path)).join(',') || 'none'}`,
    );
}

/**
 * Nullable schemas that refuse null after all (OpenAPI 3.0.3): `nullable` adds null only to the
 * `type` beside it, and the other keywords (allOf, $ref, an enum without null) still apply.
 */
function nullableFaults(node: unknown, at = '#'): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => nullableFaults(item, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  const schema = node as Record<string, any>;
  const faults: string[] = [];
  if (schema.nullable === true) {
    if (!schema.type) faults.push(`${at}: nullable without a type`);
    for (const keyword of ['allOf', 'oneOf', 'anyOf', '$ref'])
      if (schema[keyword]) faults.push(`${at}: nullable beside ${keyword}`);
    if (Array.isArray(schema.enum) && !schema.enum.includes(null))
      faults.push(`${at}: nullable enum without null`);
  }
  return faults.concat(
    Object.entries(schema).flatMap(([key, value]) =>
      nullableFaults(value, `${at}/${key.replace(/\//g, '~1')}`),
    ),
  );
}

/** A route added without documentation, as a new feature might be. */
@Controller('api/v1/sites/:siteId/undocumented')
class UndocumentedController {
  @Post('things')
  @HttpCode(202)
  start() {
    return { data: null };
  }
}

/** A route hidden from the document. */
@Controller('api/v1/sites/:siteId/hidden')
class HiddenController {
  @Get()
  @ApiExcludeEndpoint()
  list() {
    return { data: [] };
  }
}

/** A route documented with a success status it does not answer. */
@Controller('api/v1/sites/:siteId/misdocumented')
class MisdocumentedController {
  @Post()
  @ApiOperation({ summary: 'Answers 201 (POST default), documented 200' })
  @ApiResponse({ status: 200, description: 'Wrong.' })
  @ApiProblems()
  create() {
    return { data: null };
  }
}

describe('OpenAPI document (GET /api/v1/openapi.json)', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await createTestApp({}, { redisKeyPrefixSuffix: 'openapi:' });
    doc = (await t.http().get(OPENAPI_JSON).expect(200)).body;
  });
  afterAll(() => t.close());

  describe('is a valid OpenAPI document', () => {
    it('passes swagger-parser validation (OpenAPI schema and references) with 0 errors', async () => {
      await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
    });

    it('every nullable schema admits null: nullable beside a type, not beside allOf or $ref, null in its enum', () => {
      expect(nullableFaults(doc)).toEqual([]);
    });

    it('declares every path parameter of every path template, as required', () => {
      const missing: string[] = [];
      for (const { method, path, op } of operations(doc)) {
        const declared = new Set(
          (op.parameters ?? []).filter((p: any) => p.in === 'path' && p.required).map((p: any) => p.name),
        );
        for (const [, name] of path.matchAll(/\{([^}]+)\}/g))
          if (!declared.has(name)) missing.push(`${method} ${path}: ${name}`);
      }
      expect(missing).toEqual([]);
    });
  });

  describe('documents every route the router serves under /api/v1, with the status it answers', () => {
    it('finds the routes in the running router (the check sees real routes)', () => {
      const routes = apiRoutes(t).map((r) => `${r.method} ${r.path}`);
      expect(routes).toEqual(
        expect.arrayContaining([`GET ${LISTING}`, 'POST /api/v1/sites', 'DELETE /api/v1/sites/{siteId}']),
      );
    });

    it('every served route has an operation with the same method and path', () => {
      expect(undocumentedRoutes(t, doc)).toEqual([]);
    });

    it("every operation's success statuses include the status its handler answers by default", () => {
      expect(wrongSuccessStatuses(t, doc)).toEqual([]);
    });

    it('a route added without documentation, hidden from the document, or documented with another success status, is flagged', async () => {
      const extra = await createTestApp(
        {},
        {
          redisKeyPrefixSuffix: 'openapi-extra:',
          extraControllers: [UndocumentedController, HiddenController, MisdocumentedController],
        },
      );
      try {
        const extraDoc = (await extra.http().get(OPENAPI_JSON).expect(200)).body;
        expect(undocumentedRoutes(extra, extraDoc)).toEqual(['GET /api/v1/sites/{siteId}/hidden']);
        expect(wrongSuccessStatuses(extra, extraDoc)).toEqual([
          'GET /api/v1/sites/{siteId}/hidden: answers 200, documented none',
          'POST /api/v1/sites/{siteId}/misdocumented: answers 201, documented 200',
        ]);
        const bare = 'POST /api/v1/sites/{siteId}/undocumented/things';
        const faults = [
          ...operationFaults(extraDoc),
          ...commonProblemFaults(extraDoc),
          ...bodyFaults(extraDoc),
        ];
        // And the test client refuses its answer: no operation of the document serves the path.
        const org = await createOrganization(extra.app);
        const things = `/api/v1/sites/${org.site.id}/undocumented/things`;
        await expect(extra.http().post(things).set(org.auth).send({})).rejects.toThrow(
          `POST ${things} answered 202: no operation of the document serves this path`,
        );
        expect(faults.filter((f) => f.startsWith(`${bare}:`))).toEqual(
          expect.arrayContaining([
            `${bare}: no summary`,
            `${bare}: no apiKey security`,
            `${bare}: 202 has no schema`,
            `${bare}: no 401 unauthorized`,
            `${bare}: empty body schema`,
          ]),
        );
      } finally {
        await extra.close();
      }
    });

    it('every documented operation is served (no stale operation)', () => {
      const served = new Set(servedRoutes(t.app).map((r) => `${r.method} ${r.path}`));
      const stale = operations(doc)
        .map(({ method, path }) => `${method} ${path}`)
        .filter((key) => !served.has(key));
      expect(stale).toEqual([]);
    });

    it('every operation has a summary, a tag, a success response with a schema (204 aside) and needs the API key', () => {
      expect(operationFaults(doc)).toEqual([]);
    });
  });

  describe('documents every problem response with the shared Problem schema', () => {
    it('Problem has the RFC 9457 members plus code, requestId, errors[] (pointer or parameter) and the importId and state extensions', () => {
      const problem = doc.components.schemas.Problem;
      expect(Object.keys(problem.properties).sort()).toEqual(
        [
          'code',
          'detail',
          'errors',
          'importId',
          'instance',
          'requestId',
          'state',
          'status',
          'title',
          'type',
        ].sort(),
      );
      expect(problem.required.sort()).toEqual(
        ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'].sort(),
      );
      expect(problem.properties.code.enum.sort()).toEqual(Object.keys(ERROR_CODES).sort());
      expect(problem.properties.errors.items.$ref).toBe('#/components/schemas/ProblemEntry');
      expect(Object.keys(doc.components.schemas.ProblemEntry.properties).sort()).toEqual(
        ['code', 'detail', 'parameter', 'pointer'].sort(),
      );
    });

    it('every 4xx/5xx response of every operation is application/problem+json of Problem, with an example of each code of its status', () => {
      const faults: string[] = [];
      for (const { method, path, op } of operations(doc)) {
        for (const [status, response] of Object.entries(op.responses) as Array<[string, any]>) {
          if (!/^[45]/.test(status)) continue;
          const media = response.content?.['application/problem+json'];
          if (media?.schema?.$ref !== '#/components/schemas/Problem')
            faults.push(`${method} ${path} ${status}: not a Problem`);
          for (const [code, example] of Object.entries(media?.examples ?? {}) as Array<[string, any]>)
            if (
              ERROR_CODES[code as keyof typeof ERROR_CODES]?.status !== Number(status) ||
              example.value.code !== code
            )
              faults.push(`${method} ${path} ${status}: example ${code} is of another status`);
        }
      }
      expect(faults).toEqual([]);
    });

    it('every operation documents the problems any API call can give: 401 unauthorized, 429 rate_limited (Retry-After), 500, 503', () => {
      expect(commonProblemFaults(doc)).toEqual([]);
    });

    it('operations with a JSON body document its schema and the body problems (400, 413, 415)', () => {
      expect(bodyFaults(doc)).toEqual([]);
    });

    it('names the codes a route can give: the listing its four 400 codes and not_found, discover its 409 and 422, DELETE a site last_site', () => {
      const codes = (method: string, path: string, status: number) =>
        Object.keys(
          operation(doc, method, path).responses[status]?.content['application/problem+json'].examples ?? {},
        );
      expect(codes('GET', LISTING, 400).sort()).toEqual(
        ['cursor_mismatch', 'invalid_cursor', 'invalid_filter', 'invalid_request'].sort(),
      );
      expect(codes('GET', LISTING, 404)).toEqual(['not_found']);
      expect(codes('POST', '/api/v1/sites/{siteId}/pages/discover', 409)).toEqual([
        'discovery_already_running',
      ]);
      expect(codes('POST', '/api/v1/sites/{siteId}/pages/discover', 422)).toEqual(['sitemap_not_on_site']);
      expect(codes('DELETE', '/api/v1/sites/{siteId}', 409)).toEqual(['last_site']);
    });
  });

  describe('documents every listing parameter of the contract with its rules', () => {
    let params: Map<string, any>;
    beforeAll(() => {
      params = new Map(
        (operation(doc, 'GET', LISTING).parameters as any[])
          .filter((p) => p.in === 'query')
          .map((p) => [p.name, p]),
      );
    });

    it("every contract parameter and every parameter the listing's parser accepts is documented", () => {
      const expected = [...new Set([...CONTRACT_LISTING_PARAMETERS, ...Object.keys(LISTING_PARAMS)])];
      expect(expected.filter((name) => !params.has(name))).toEqual([]);
      expect([...params.keys()].filter((name) => !expected.includes(name))).toEqual([]);
    });

    it('repeatable parameters are arrays sent once per value (form, explode); keywords at most 20 of 200 characters', () => {
      for (const name of ['keywords', 'labels.all', 'labels.any', 'labels.none']) {
        expect(params.get(name)).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } });
      }
      expect(params.get('keywords').schema).toMatchObject({ maxItems: 20, items: { maxLength: 200 } });
    });

    it('labels.none says it needs narrowing and takes only :true flag tokens', () => {
      const none = params.get('labels.none');
      expect(none.description).toMatch(/labels\.all, labels\.any, from or to/);
      expect(none.schema.items.pattern).toBe(':true$');
    });

    it('ranges, formats, enums and defaults follow the contract', () => {
      expect(params.get('limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
      for (const score of ['quality', 'service', 'trust'])
        for (const bound of ['min', 'max'])
          expect(params.get(`${score}.${bound}`).schema).toEqual({ type: 'number', minimum: 0, maximum: 1 });
      expect(params.get('from').schema.format).toBe('date-time');
      expect(params.get('to').schema.format).toBe('date-time');
      expect(params.get('channel').schema.enum).toEqual(['web', 'hosted', 'playground']);
      expect(params.get('language').schema.enum).toEqual(['fr', 'en', 'de', 'it', 'es', 'nl']);
      expect(params.get('feedback').schema.enum).toEqual(['positive', 'negative']);
      expect(params.get('labelStatus').schema.enum).toEqual(['labeled', 'pending', 'failed', 'not_eligible']);
      expect(params.get('count').schema.type).toBe('boolean');
      expect([...params.values()].every((p) => p.required === false)).toBe(true);
    });

    it('the listing response documents meta.nextCursor and the optional meta.count', () => {
      const schema = operation(doc, 'GET', LISTING).responses[200].content['application/json'].schema;
      expect(schema.properties.data.items.$ref).toBe('#/components/schemas/ListedConversation');
      expect(Object.keys(schema.properties.meta.properties).sort()).toEqual(['count', 'nextCursor']);
    });
  });

  describe('documents the API key scheme as what it is', () => {
    it('HTTP bearer with an opaque sak_ key, not a JWT', () => {
      const schemes = doc.components.securitySchemes;
      expect(Object.keys(schemes)).toEqual(['apiKey']);
      expect(schemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(schemes.apiKey.bearerFormat).not.toMatch(/jwt/i);
      expect(schemes.apiKey.description).toMatch(/sak_/);
    });
  });

  describe('every answer the end-to-end suite receives is checked against the document (test/setup/checked-answers.ts)', () => {
    let contract: ResponseContract;
    beforeAll(() => {
      contract = new ResponseContract(doc);
    });
    /** A JSON answer of `method path`, as the test client hands it to the check. */
    const answer = (
      method: string,
      path: string,
      status: number,
      body: unknown,
      type = 'application/json',
    ): Exchange => ({
      method,
      path,
      status,
      contentType: `${type}; charset=utf-8`,
      body,
      hasBody: body !== undefined,
    });

    it('a conversation with entryWidget, pageContext and labelSummary null, and its label record with judge and scores null, are answers the document allows', async () => {
      const org = await createOrganization(t.app);
      const { id } = await recordConversation(t, org);
      const one = await getAs(t, org, `${LISTING.replace('{siteId}', org.site.id)}/${id}`).expect(200);
      expect(one.body.data).toMatchObject({ entryWidget: null, pageContext: null, labelSummary: null });
      const labels = await getAs(t, org, `${LISTING.replace('{siteId}', org.site.id)}/${id}/labels`).expect(
        200,
      );
      expect(labels.body.data).toMatchObject({ judge: null, scores: null });
    });

    it('a body the schema refuses fails with the pointer and the reason: a wrong type, a value out of the enum, a field the document does not name', async () => {
      const org = await createOrganization(t.app);
      const { id } = await recordConversation(t, org);
      const path = `${LISTING.replace('{siteId}', org.site.id)}/${id}`;
      const real = (await t.http().get(path).set(org.auth).expect(200)).body;
      expect(contract.violation(answer('GET', path, 200, real))).toBeUndefined();
      const wrong = structuredClone(real);
      Object.assign(wrong.data, { entryWidget: 'banner', labelStatus: 'maybe', colour: 'red' });
      const violation = contract.violation(answer('GET', path, 200, wrong));
      expect(violation).toMatch(`GET ${path} answered 200: GET ${LISTING}/{id} 200 application/json:`);
      expect(violation).toMatch(/\n  \/data\/entryWidget: must be object .*\n/);
      expect(violation).toMatch(
        /\n  \/data\/labelStatus: must be equal to one of the allowed values \["labeled","pending","failed","not_eligible"\]/,
      );
      expect(violation).toMatch(/\n  \/data: must NOT have additional properties "colour"/);
    });

    it('a status, an operation or a media type the document does not name fails', () => {
      const problem = {
        type: 'x',
        title: 'x',
        status: 404,
        detail: 'x',
        instance: '/x',
        code: 'not_found',
        requestId: 'req_x',
      };
      expect(
        contract.violation(answer('GET', '/api/v1/sites', 404, problem, 'application/problem+json')),
      ).toMatch(/GET \/api\/v1\/sites documents no 404/);
      expect(contract.violation(answer('POST', '/api/v1/sites/site_x/elsewhere', 200, {}))).toMatch(
        /no operation of the document serves this path/,
      );
      expect(contract.violation(answer('PUT', '/api/v1/sites', 200, {}))).toMatch(
        /the document has no operation PUT \/api\/v1\/sites/,
      );
      expect(
        contract.violation(
          answer('GET', '/api/v1/sites', 200, { data: [], meta: { nextCursor: null } }, 'text/html'),
        ),
      ).toMatch(/documented as application\/json, not "text\/html"/);
      expect(contract.violation(answer('GET', '/api/v1/nowhere', 404, { error: 'gone' }))).toMatch(
        /not a problem document: not application\/problem\+json/,
      );
    });

    it('allows what the document rightly leaves out: the document itself, a plain 405, paths outside /api/v1', () => {
      expect(contract.violation(answer('GET', '/api/v1/openapi.json', 200, doc))).toBeUndefined();
      expect(
        contract.violation(answer('PUT', '/api/v1/sites', 405, 'Method Not Allowed', 'text/plain')),
      ).toBeUndefined();
      expect(contract.violation(answer('GET', '/health/live', 200, { status: 'ok' }))).toBeUndefined();
    });
  });

  describe('the documented success status is the status a real call answers', () => {
    const documented = (method: string, path: string) => successStatuses(operation(doc, method, path));

    it('POST /api/v1/sites answers 201, as documented', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org).send({ name: 'Docs shop', origin: 'https://docs-shop.example' });
      expect(res.status).toBe(201);
      expect(documented('POST', '/api/v1/sites')).toEqual([res.status]);
    });

    it('POST …/conversations answers 201 and …/{id}/engagement 200, as documented', async () => {
      const org = await createOrganization(t.app);
      const created = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .send(conversationBody());
      expect(created.status).toBe(201);
      expect(documented('POST', LISTING)).toEqual([created.status]);
      const engagement = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${created.body.data.id}/engagement`)
        .set(org.auth)
        .send({ impressions: 2, clicks: 1 });
      expect(engagement.status).toBe(200);
      expect(documented('POST', `${LISTING}/{id}/engagement`)).toEqual([engagement.status]);
    });

    it('POST …/pages/discover answers 202 when handed to the background, documented with the 200 of an import closed at once', async () => {
      const org = await createOrganization(t.app);
      const res = await t.http().post(`/api/v1/sites/${org.site.id}/pages/discover`).set(org.auth).send({});
      expect(res.status).toBe(202);
      expect(documented('POST', '/api/v1/sites/{siteId}/pages/discover').sort()).toEqual([200, 202]);
    });

    it('DELETE a site answers 204 and the listing 200, as documented', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org);
      const list = await t.http().get(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth);
      expect(list.status).toBe(200);
      expect(documented('GET', LISTING)).toEqual([list.status]);
      const other = await postSite(t, org)
        .send({ name: 'To delete', origin: 'https://to-delete.example' })
        .expect(201);
      const deleted = await t.http().delete(`/api/v1/sites/${other.body.data.id}`).set(org.auth);
      expect(deleted.status).toBe(204);
      expect(documented('DELETE', '/api/v1/sites/{siteId}')).toEqual([deleted.status]);
    });
  });
});
