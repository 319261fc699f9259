import { request as httpRequest } from 'node:http';
import { createConnection } from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { MAX_JSON_DEPTH } from '../../src/common/http/body-parsing';
import {
  appendMessages,
  conversationBody,
  postConversation,
  recordConversation,
} from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';

/** `{"a":[[[…]]]}` nested `levels` deep (the object counts as one level). */
function nested(levels: number): string {
  return `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
}

/** Sends raw bytes on one connection and returns everything the server wrote before closing. */
function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer; got ${JSON.stringify(answer)}`)));
    socket.write(bytes);
  });
}

/** POSTs raw bytes (supertest would serialize a Buffer sent as JSON). */
function postBytes(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || '{}') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: string } {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

describe('Hostile requests (issue: hostile input never takes the service down)', () => {
  let t: TestApp;
  let port: number;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  /** The organization's rows (other suites write to the same database at the same time). */
  const count = async (table: 'conversations' | 'messages') =>
    Number(
      (
        await t.app
          .get(DataSource)
          .query(
            table === 'conversations'
              ? 'SELECT count(*)::int AS n FROM conversations WHERE organization_id = $1'
              : 'SELECT count(*)::int AS n FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE c.organization_id = $1',
            [org.organization.id],
          )
      )[0].n,
    );

  beforeAll(async () => {
    t = await createTestApp();
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    org = await createOrganization(t.app);
  });
  afterAll(() => t.close());

  describe(`a JSON body nested deeper than ${MAX_JSON_DEPTH} levels is a 400 invalid_request (pointer ""), on any path, before authentication (a method the path does not serve: the plain 405)`, () => {
    it.each([2_000, 5_000, 100_000])(
      '%i levels, unauthenticated, on any path: 400, and the process keeps serving',
      async (levels) => {
        const body = nested(levels);
        for (const path of ['/api/v1/sites', '/no-such-path']) {
          const started = Date.now();
          const res = await t.http().post(path).set('Content-Type', 'application/json').send(body);
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(res.body.code).toBe('invalid_request');
          expect(res.body.errors).toEqual([expect.objectContaining({ code: 'too_deep', pointer: '' })]);
          expect(Date.now() - started).toBeLessThan(5000);
        }
        // A method the path does not serve is the plain 405: the body is never read.
        const unserved = await t
          .http()
          .post('/health/live')
          .set('Content-Type', 'application/json')
          .send(body);
        expect(unserved.status).toBe(405);
        expect(unserved.headers.allow).toBe('GET, HEAD');
        await t.http().get('/health/live').expect(200);
      },
    );

    it(`${MAX_JSON_DEPTH + 1} levels on a recording (a warm instance gave a 500): 400, nothing stored`, async () => {
      const before = await count('conversations');
      let metadata: unknown = {};
      for (let i = 0; i < MAX_JSON_DEPTH; i++) metadata = { x: metadata };
      const res = await postConversation(t, org, { channel: 'playground', metadata });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'too_deep', pointer: '' })]);
      expect(await count('conversations')).toBe(before);
    });

    it(`exactly ${MAX_JSON_DEPTH} levels is accepted (generous for metadata, messages, blocks and products)`, async () => {
      let metadata: unknown = 'leaf';
      // The body object is level 1 and metadata level 2: MAX - 1 more objects reach the bound.
      for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) metadata = { x: metadata };
      const res = await postConversation(t, org, { channel: 'playground', metadata });
      expect(res.status).toBe(201);
    });
  });

  describe('text PostgreSQL cannot store is refused up front: one invalid_character entry per field', () => {
    it('a lone surrogate in message text, metadata values and metadata keys: 400, nothing stored', async () => {
      const before = await count('conversations');
      const body =
        '{"title":"Lone","channel":"web","language":"en","agent":' +
        JSON.stringify(conversationBody().agent) +
        ',"messages":[{"role":"shopper","blocks":[{"type":"text","text":"a\\ud800b"}]}],' +
        '"metadata":{"note":"\\udfff","k\\ud801":1}}';
      const res = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors).toEqual([
        expect.objectContaining({ code: 'invalid_character', pointer: '/messages/0/blocks/0/text' }),
        expect.objectContaining({ code: 'invalid_character', pointer: '/metadata/note' }),
        expect.objectContaining({ code: 'invalid_character', pointer: '/metadata/k\ud801' }),
      ]);
      expect(await count('conversations')).toBe(before);
    });

    it('a lone surrogate in an appended message: 400, nothing stored', async () => {
      const conv = await recordConversation(t, org);
      const before = await count('messages');
      const res = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${conv.id}/messages`)
        .set(org.auth)
        .set('Content-Type', 'application/json')
        .send('{"messages":[{"role":"shopper","blocks":[{"type":"text","text":"\\ud800"}]}]}');
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ code: 'invalid_character', pointer: '/messages/0/blocks/0/text' }),
      ]);
      expect(await count('messages')).toBe(before);
    });

    it('a well-formed surrogate pair (an emoji) is stored as sent', async () => {
      const conv = await recordConversation(t, org, {
        title: 'Shoes 👟',
        channel: 'playground',
        metadata: { mood: '😀' },
      });
      expect(conv.title).toBe('Shoes 👟');
    });
  });

  describe('a message that is not an object is a 400 on create and append, not a 500', () => {
    it.each([[[]], [[1]], ['text'], [null], [42]])('messages: [%j]', async (item) => {
      const before = await count('conversations');
      const res = await postConversation(t, org, { messages: [item] });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ code: 'invalid_type', pointer: '/messages/0' })]),
      );
      expect(await count('conversations')).toBe(before);

      const conv = await recordConversation(t, org);
      const append = await appendMessages(t, org, conv.id, [item]);
      expect(append.status).toBe(400);
      expect(append.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ code: 'invalid_type', pointer: '/messages/0' })]),
      );
    });

    it('blocks and products that are not objects are 400 too', async () => {
      const res = await postConversation(t, org, {
        messages: [{ role: 'agent', blocks: [[], { type: 'product_cards', products: [[], 'x'] }] }],
      });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ code: 'invalid_type', pointer: '/messages/0/blocks/0' }),
          expect.objectContaining({ code: 'invalid_type', pointer: '/messages/0/blocks/1/products/0' }),
        ]),
      );
    });
  });

  describe('a path or query holding the NUL character is answered cleanly', () => {
    it('GET /api/v1/sites/%00 is a 404 not_found (no resource can have that id)', async () => {
      const res = await t.http().get('/api/v1/sites/%00').set(org.auth);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    });

    it('a NUL in a query value is a 400 invalid_character naming the parameter', async () => {
      const res = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations?keywords=a%00b`);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ code: 'invalid_character', parameter: 'keywords' }),
      ]);
    });
  });

  describe('a body whose Content-Encoding does not match its bytes is a 400, before authentication', () => {
    it.each(['gzip', 'deflate', 'br'])(
      'Content-Encoding: %s on bytes that are not: 400 invalid_request',
      async (encoding) => {
        const res = await t
          .http()
          .post('/api/v1/sites')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .send('{"name":"not compressed"}');
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_encoding', pointer: '' })]);
      },
    );

    it('a truncated gzip body: 400 invalid_encoding', async () => {
      const gz = gzipSync(Buffer.from('{"name":"x","origin":"https://a.example"}'));
      const res = await postBytes(
        port,
        '/api/v1/sites',
        { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        gz.subarray(0, gz.length - 8),
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'invalid_encoding', pointer: '' })]);
    });

    it('an unknown Content-Encoding: 415 unsupported_media_type', async () => {
      const res = await t
        .http()
        .post('/api/v1/sites')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'zstd-9000')
        .send('{}');
      expect(res.status).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it('a real gzip body is read', async () => {
      const res = await postBytes(
        port,
        '/api/v1/sites',
        { ...org.auth, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        gzipSync(Buffer.from(JSON.stringify({ name: 'Zipped', origin: 'https://zipped.example' }))),
      );
      expect(res.status).toBe(201);
    });
  });

  describe("Node's own HTTP parser answers (400, 431) are problem documents", () => {
    it('a malformed request line: 400 application/problem+json', async () => {
      const res = parseRaw(await raw(port, 'GARBAGE\r\n\r\n'));
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'invalid_request' });
    });

    it('headers over the limit: 431 headers_too_large', async () => {
      const res = parseRaw(
        await raw(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      expect(res.status).toBe(431);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ status: 431, code: 'headers_too_large' });
    });
  });
});
