import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { transfer } from '../fixtures/wire.js';
import { createPartnerSimulator, type PartnerSimulator } from '../src/testing/index.js';
import { DOCUMENTS } from './helpers/documents.js';
import { codeBlocks } from './helpers/markdown.js';

/**
 * The serverless recipes (docs/serverless.md), run as written: each file of a recipe is written out
 * as the guide shows it, the package's name pointing at the sources and Next.js's `@/` at the
 * recipe's root. Recipes are looked for in the README and every guide, wherever the text moves.
 */

const dir = mkdtempSync(join(tmpdir(), 'readme-recipes-'));
const recipes = new Map(
  DOCUMENTS.flatMap((document) =>
    codeBlocks(readFileSync(document, 'utf8')).flatMap(({ file, code }) =>
      file ? [[file, code] as const] : [],
    ),
  ),
);

async function load<T>(file: string): Promise<T> {
  const code = recipes.get(file);
  if (code === undefined) throw new Error(`neither the README nor a guide has a block for ${file}`);
  const path = join(dir, file);
  const written = code
    .replace(/from 'partner-s2s-sdk'/g, `from '${resolve('src/index.ts')}'`)
    .replace(/from '@\/(.*?)'/g, (_, target: string) => {
      const to = relative(dirname(path), join(dir, `${target}.ts`));
      return `from '${to.startsWith('.') ? to : `./${to}`}'`;
    });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, written);
  return (await import(pathToFileURL(path).href)) as T;
}

const ENV = ['PARTNER_BASE_URL', 'PARTNER_CLIENT_ID', 'PARTNER_CLIENT_SECRET', 'CALLBACK_TOKEN'];
const TOKEN = 'recipe-callback-token';
/** The function the recipes' listeners call, a partner's own. */
const credit = vi.fn(async (..._values: unknown[]) => {});

beforeEach(() => {
  for (const name of ENV) vi.stubEnv(name, undefined);
  vi.stubGlobal('credit', credit);
  credit.mockClear();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}
type LambdaHandler = (event: Record<string, unknown>) => Promise<LambdaResult>;

describe('docs/serverless.md: AWS Lambda behind API Gateway', () => {
  const delivered = JSON.stringify(transfer({ transferId: 'tr_lambda_v2', status: 'delivered' }));
  const refunded = JSON.stringify(transfer({ transferId: 'tr_lambda_v1', status: 'refunded' }));
  let handler: LambdaHandler;

  beforeEach(async () => {
    vi.stubEnv('CALLBACK_TOKEN', TOKEN);
    handler ??= (await load<{ handler: LambdaHandler }>('handler.ts')).handler;
  });

  it('answers an HTTP API (payload 2.0) event whose body is base64, and the listener runs', async () => {
    const result = await handler({
      version: '2.0',
      rawPath: '/callbacks',
      rawQueryString: 'source=partner',
      headers: { host: 'abc.execute-api.eu-west-1.amazonaws.com', 'x-callback-token': TOKEN },
      requestContext: { http: { method: 'POST', path: '/callbacks', sourceIp: '203.0.113.7' } },
      body: Buffer.from(delivered).toString('base64'),
      isBase64Encoded: true,
    });
    expect(result).toMatchObject({ statusCode: 200, isBase64Encoded: false });
    expect(JSON.parse(result.body)).toMatchObject({ received: true, outcome: 'dispatched' });
    expect(result.headers['content-type']).toContain('application/json');
    expect(credit).toHaveBeenCalledWith('user-1', '25.45');
  });

  it('answers a REST API (payload 1.0) event with a plain body', async () => {
    const result = await handler({
      resource: '/callbacks',
      path: '/callbacks',
      httpMethod: 'POST',
      headers: { Host: 'abc.execute-api.eu-west-1.amazonaws.com', 'X-Callback-Token': TOKEN },
      queryStringParameters: null,
      requestContext: { httpMethod: 'POST', identity: { sourceIp: '203.0.113.7' } },
      body: refunded,
      isBase64Encoded: false,
    });
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ received: true });
  });

  it('refuses a delivery without the token (401) and a GET (405)', async () => {
    const post = await handler({
      httpMethod: 'POST',
      path: '/callbacks',
      headers: { host: 'example.com', 'x-callback-token': 'forged' },
      body: delivered,
      isBase64Encoded: false,
    });
    expect(post.statusCode).toBe(401);
    const get = await handler({
      rawPath: '/callbacks',
      rawQueryString: '',
      headers: { host: 'example.com', 'x-callback-token': TOKEN },
      requestContext: { http: { method: 'GET' } },
      isBase64Encoded: false,
    });
    expect(get.statusCode).toBe(405);
  });
});

describe('docs/serverless.md: Next.js route handlers', () => {
  let sim: PartnerSimulator | undefined;
  let server: { url: string; close: () => Promise<void> } | undefined;
  afterAll(async () => {
    await server?.close();
    sim?.close();
  });

  it('load with the environment unset (as next build does), then serve once it is set', async () => {
    type Lib = { partner(): unknown; callbacks(): unknown };
    type CallbackRoute = { POST(request: Request): Promise<Response>; dynamic: string };
    type RoutesRoute = { GET(): Promise<Response>; dynamic: string };
    // Loading every module builds nothing: no client, no router, no environment read.
    const lib = await load<Lib>('lib/partner.ts');
    const callbackRoute = await load<CallbackRoute>('app/api/partner/callbacks/route.ts');
    const routesRoute = await load<RoutesRoute>('app/api/bridge/routes/route.ts');
    expect([callbackRoute.dynamic, routesRoute.dynamic]).toEqual(['force-dynamic', 'force-dynamic']);
    // A request without its environment fails that request, naming what is missing.
    expect(() => lib.partner()).toThrow('PARTNER_BASE_URL is not set');
    await expect(routesRoute.GET()).rejects.toThrow('PARTNER_BASE_URL is not set');

    sim = createPartnerSimulator();
    server = await sim.listen();
    vi.stubEnv('PARTNER_BASE_URL', server.url);
    vi.stubEnv('PARTNER_CLIENT_ID', sim.demo.credentials.clientId);
    vi.stubEnv('PARTNER_CLIENT_SECRET', sim.demo.credentials.clientSecret);
    vi.stubEnv('CALLBACK_TOKEN', TOKEN);
    const routes = await routesRoute.GET();
    expect(routes.status).toBe(200);
    expect(((await routes.json()) as { routeId: string }[]).map((route) => route.routeId)).toContain(
      'base-usdc-to-bsc-usdc',
    );

    const body = JSON.stringify(transfer({ transferId: 'tr_next', status: 'delivered' }));
    const post = (token: string) =>
      callbackRoute.POST(
        new Request('https://app.example.com/api/partner/callbacks', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-callback-token': token },
          body,
        }),
      );
    expect((await post('forged')).status).toBe(401);
    expect((await post(TOKEN)).status).toBe(200);
    expect(credit).toHaveBeenCalledWith('user-1', '25.45');
  });
});
