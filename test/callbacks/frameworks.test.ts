import { createHmac, timingSafeEqual } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { transfer } from '../../fixtures/wire.js';
import { type CallbackRequest, type CallbackRouter, createCallbackRouter } from '../../src/index.js';

/**
 * The callback handlers mounted in real Express 5, Fastify 5 and Hono 4 apps, over real HTTP on
 * 127.0.0.1, exactly as docs/callbacks.md shows them.
 */

const SECRET = 'framework-test-secret';
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');

/** An HMAC of the raw body, as a partner's deployment might agree on. */
function hmac(req: CallbackRequest): boolean {
  const given = Buffer.from(req.headers.get('x-signature') ?? '');
  const expected = Buffer.from(sign(req.body));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const MAX_BYTES = 4096;
const newRouter = () =>
  createCallbackRouter({ authenticate: hmac, maxBodyBytes: MAX_BYTES, bodyTimeoutMs: 300 });

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listenNode(server: Server): Promise<string> {
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
}

// Whitespace a JSON parser drops: an HMAC of the bytes sent tells a re-serialised body apart.
const DELIVERY = JSON.stringify(transfer({ status: 'delivered' }), null, 1);

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-signature': sign(body), ...headers },
    body,
  });
  return { status: response.status, body: await response.text() };
}

/** A request whose body stops after its first bytes: the handler's `bodyTimeoutMs` answers it. */
function stalled(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.write('{"transferId":');
  });
}

/** docs/callbacks.md's promises: 200, 400, 401, 405, 413. */
async function expectPromises(url: string) {
  expect(await post(url, DELIVERY)).toMatchObject({
    status: 200,
    body: expect.stringContaining('dispatched'),
  });
  expect((await post(url, '{"transferId":')).status).toBe(400);
  expect((await post(url, DELIVERY, { 'x-signature': sign('something else') })).status).toBe(401);
  const get = await fetch(url);
  await get.text();
  expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
  expect((await post(url, `{"pad":"${'x'.repeat(MAX_BYTES)}"}`)).status).toBe(413);
}

describe('Express 5', () => {
  async function app(mount: (app: express.Express, router: CallbackRouter) => void) {
    const router = newRouter();
    const application = express();
    mount(application, router);
    return { router, url: await listenNode(application.listen(0, '127.0.0.1')) };
  }

  it('without a body parser: nodeHandler reads the stream itself', async () => {
    const { url } = await app((a, router) => a.all('/callbacks', router.nodeHandler));
    await expectPromises(url);
    expect(await stalled(url)).toBe(408);
  });

  it('after express.raw: the raw bytes, so an HMAC of the body holds', async () => {
    const { url } = await app((a, router) =>
      a.all('/callbacks', express.raw({ type: '*/*', limit: '1mb' }), router.nodeHandler),
    );
    await expectPromises(url);
  });

  it('after express.text: the text as sent', async () => {
    const { url } = await app((a, router) =>
      a.all('/callbacks', express.text({ type: '*/*', limit: '1mb' }), router.nodeHandler),
    );
    await expectPromises(url);
  });

  it('after express.json: dispatched, but the raw bytes are gone and an HMAC of them fails', async () => {
    const { url } = await app((a, router) => {
      a.all('/callbacks', express.json({ limit: '1mb' }), router.nodeHandler);
    });
    // nodeHandler sees JSON.stringify(req.body), not what was sent: the body's HMAC no longer holds.
    expect((await post(url, DELIVERY)).status).toBe(401);
    const compact = JSON.stringify(JSON.parse(DELIVERY));
    expect((await post(url, compact)).status).toBe(200);
    // express.json answers a broken body itself, with its own 400 page.
    expect((await post(url, '{"transferId":')).status).toBe(400);
    const get = await fetch(url);
    await get.text();
    expect(get.status).toBe(405);
    expect((await post(url, `{"pad":"${'x'.repeat(MAX_BYTES)}"}`)).status).toBe(413);
    // A body of `{}` parsed by express.json is that body, not "no parser ran" (the stream is spent).
    expect(await post(url, '{}')).toMatchObject({ status: 200, body: expect.stringContaining('unknown') });
  });
});

describe('Fastify 5', () => {
  async function app(register: (fastify: FastifyInstance, router: CallbackRouter) => void) {
    const router = newRouter();
    const fastify = Fastify();
    register(fastify, router);
    closers.push(() => fastify.close());
    const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
    return `${address}/callbacks`;
  }

  it('with the unread request handed to nodeHandler (reply.hijack)', async () => {
    const url = await app((fastify, router) => {
      fastify.register(async (scope) => {
        // Only in this plugin's scope: leave the body unread for nodeHandler.
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
        scope.all('/callbacks', (request, reply) => {
          reply.hijack();
          router.nodeHandler(request.raw, reply.raw);
        });
      });
    });
    await expectPromises(url);
    expect(await stalled(url)).toBe(408);
  });

  it('with the raw body Fastify read as a Buffer', async () => {
    const url = await app((fastify, router) => {
      fastify.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_r, body, done) =>
          done(null, body),
        );
        scope.all('/callbacks', (request, reply) => {
          reply.hijack();
          router.nodeHandler(Object.assign(request.raw, { body: request.body }), reply.raw);
        });
      });
    });
    await expectPromises(url);
  });
});

describe('Hono 4 on @hono/node-server', () => {
  it('with fetchHandler(c.req.raw)', async () => {
    const router = newRouter();
    const app = new Hono();
    app.all('/callbacks', (c) => router.fetchHandler(c.req.raw));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
    });
    closers.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(resolve);
        }),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
    await expectPromises(url);
    expect(await stalled(url)).toBe(408);
  });
});
