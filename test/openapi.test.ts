import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { compileErrors, validate } from '@readme/openapi-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterEach, describe, expect, it } from 'vitest';
import {
  API_PREFIX,
  ArgumentError,
  KNOWN_SCOPES,
  type OpenApiDocument,
  openApiDocument,
} from '../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../src/testing/index.js';
import { skipOrFail } from './helpers/shared.js';
import { checkSnippets } from './helpers/type-check.js';

/*
 * The OpenAPI document of the interface, for partners who do not write TypeScript: valid OpenAPI
 * 3.1, exactly the specified endpoints with their scopes, open where the specification is, types
 * generated from it that the SDK's own values fit, and the same document wherever it is obtained
 * (the package's file, the simulator, the CLI in test/cli/openapi.test.ts).
 */

const doc = openApiDocument();
type Json = Record<string, unknown>;

/** Every object schema in `schema`, with where it is. */
function objectSchemas(schema: unknown, at: string, found: { at: string; schema: Json }[] = []) {
  if (Array.isArray(schema)) {
    schema.forEach((item, index) => {
      objectSchemas(item, `${at}/${index}`, found);
    });
  } else if (typeof schema === 'object' && schema !== null) {
    const node = schema as Json;
    if (node.type === 'object') found.push({ at, schema: node });
    for (const [key, value] of Object.entries(node)) objectSchemas(value, `${at}/${key}`, found);
  }
  return found;
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 that a standard validator accepts (and that validator refuses a broken one)', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : compileErrors(result)).toEqual([]);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const broken = structuredClone(doc);
    (broken.paths[`${API_PREFIX}/me`]!.get as Json).responses = 'none';
    expect((await validate(broken as never)).valid).toBe(false);
  });

  it('has the token endpoint, /me and every bridge endpoint, and no path the specification does not show', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /auth/token',
        'GET /me',
        'GET /bridge/routes',
        'POST /bridge/quote',
        'GET /bridge/fee-estimate',
        'POST /bridge/construct/transaction/batch',
        'POST /bridge/transaction/batch/send',
        'GET /bridge/transfers',
        'GET /bridge/transfers/{transferId}',
      ]
        .map((operation) => operation.replace(' ', ` ${API_PREFIX}`))
        .sort(),
    );
    expect(JSON.stringify(doc)).not.toMatch(/\/(stak|stock|users?\/|pool|portfolio)/);
  });

  it('secures each data endpoint with the OAuth2 client credentials flow and the scopes it needs', () => {
    const { oauth2 } = doc.components.securitySchemes as Record<string, Json>;
    const flow = (oauth2!.flows as Record<string, Json>).clientCredentials!;
    expect(flow.tokenUrl).toBe(`${API_PREFIX}/auth/token`);
    expect(Object.keys(flow.scopes as Json).sort()).toEqual([...KNOWN_SCOPES].sort());
    const scopes = (path: string, method: string) =>
      (doc.paths[`${API_PREFIX}${path}`]![method]!.security as Json[])[0];
    expect(scopes('/me', 'get')).toEqual({ oauth2: [] });
    expect(scopes('/bridge/routes', 'get')).toEqual({ oauth2: ['bridge:read'] });
    expect(scopes('/bridge/fee-estimate', 'get')).toEqual({ oauth2: ['bridge:read'] });
    expect(scopes('/bridge/construct/transaction/batch', 'post')).toEqual({
      oauth2: ['bridge:read', 'transactions:write'],
    });
    expect(scopes('/bridge/transaction/batch/send', 'post')).toEqual({
      oauth2: ['bridge:read', 'transactions:write'],
    });
  });

  it('keeps open what the specification does not close: every answer object takes more fields', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    const requests = [
      'TokenRequest',
      'BridgeQuoteParams',
      'BridgeConstructParams',
      'BridgeSendParams',
      'AuthorizationSignature',
    ];
    const answers = Object.entries(schemas).filter(([name]) => !requests.includes(name));
    const closed = [
      ...answers.flatMap(([name, schema]) => objectSchemas(schema, name)),
      ...Object.entries(doc.paths).flatMap(([path, item]) =>
        objectSchemas(Object.values(item)[0]!.responses, path),
      ),
    ].filter(({ schema }) => schema.additionalProperties === false);
    expect(closed.map(({ at }) => at)).toEqual([]);
    // What the specification marks "not shown": only the fields it names, the rest open.
    expect(Object.keys(schemas.Me!.properties as Json)).toEqual(['scopes']);
    expect(Object.keys(schemas.UserOperation!.properties as Json)).toEqual(['sender']);
    expect(Object.keys(schemas.BridgeFeeEstimate!.properties as Json).sort()).toEqual([
      'feePercent',
      'finalAmount',
      'systemFeeUsd',
    ]);
    // New states and scopes arrive as strings.
    expect((schemas.TransferStatus!.anyOf as Json[]).at(-1)).toEqual({ type: 'string' });
  });

  it('shows the error envelopes, and the callback body as a webhook: the single-transfer read', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    expect(schemas.ErrorEnvelope!.required).toEqual(['statusCode', 'error', 'code', 'message']);
    expect(schemas.OAuthError!.required).toEqual(['error', 'error_description']);
    expect(Object.keys(schemas.InsufficientBalanceError!.properties as Json)).toEqual(
      expect.arrayContaining(['token', 'required', 'available', 'shortfall']),
    );
    const read = doc.paths[`${API_PREFIX}/bridge/transfers/{transferId}`]!.get!.responses as Json;
    const answer = (read[200] as { content: Record<string, { schema: Json }> }).content['application/json']!;
    const callback = doc.webhooks.bridgeTransfer!.post as { requestBody: { content: Json } };
    expect(callback.requestBody.content['application/json']).toEqual({
      schema: (answer.schema.properties as Json).data,
    });
  });

  it('generates types with openapi-typescript that compile, and the SDK values fit them', async () => {
    const generated = astToString(await openapiTS(structuredClone(doc) as never));
    const errors = checkSnippets({
      'openapi.ts': generated,
      'fit.ts': `
import type { components, paths, webhooks } from './openapi';
import type { BridgeConstructResult, BridgeFeeEstimate, BridgeRoute, BridgeSendResult, BridgeTransfer, Me } from 'partner-s2s-sdk';
type S = components['schemas'];
// The SDK's interfaces as plain object types (its declared fields, deeply), which an open schema's
// index signature takes: an interface would need an index signature of its own.
type Plain<T> = T extends string | number | boolean | null | undefined
  ? T
  : T extends readonly (infer E)[]
    ? Plain<E>[]
    : { [K in keyof T as string extends K ? never : K]: Plain<T[K]> };
type Answer<P extends keyof paths, M extends 'get' | 'post'> = NonNullable<paths[P][M]> extends {
  responses: { 200: { content: { 'application/json': infer B } } };
} ? B : never;
export const fit = {
  route: (value: Plain<BridgeRoute>): S['BridgeRoute'] => value,
  construct: (value: Plain<BridgeConstructResult>): S['BridgeConstructResult'] => value,
  estimate: (value: Plain<BridgeFeeEstimate>): S['BridgeFeeEstimate'] => value,
  sent: (value: Plain<BridgeSendResult>): S['BridgeSendResult'] => value,
  transfer: (value: Plain<BridgeTransfer>): S['BridgeTransfer'] => value,
  me: (value: Plain<Me>): Answer<'/api/v1/s2s/me', 'get'> => ({ data: value }),
  routes: (value: Plain<BridgeRoute>[]): Answer<'/api/v1/s2s/bridge/routes', 'get'> => ({ data: value }),
  callback: (value: Plain<BridgeTransfer>): NonNullable<webhooks['bridgeTransfer']['post']>['requestBody'] =>
    ({ content: { 'application/json': value } }),
};
`,
    });
    expect(errors).toEqual([]);
  }, 120_000);

  it('takes a base URL as its server, and refuses one that is no http URL', () => {
    expect(openApiDocument({ baseUrl: 'https://partner.example.com/' }).servers).toEqual([
      { url: 'https://partner.example.com', description: 'The service.' },
    ]);
    expect(() => openApiDocument({ baseUrl: 'ftp://partner.example.com' })).toThrow(ArgumentError);
  });
});

describe('the simulator serves it at GET /openapi.json, at its root', () => {
  let sim: PartnerSimulator | undefined;
  afterEach(() => sim?.close());

  it('as a function and over HTTP, naming itself as the server', async () => {
    sim = createPartnerSimulator();
    const answer = await sim.fetch(`${sim.baseUrl}/openapi.json`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const served = (await answer.json()) as OpenApiDocument;
    expect(served).toEqual({ ...doc, servers: [{ url: sim.baseUrl, description: 'The service.' }] });
    const server = await sim.listen();
    try {
      const overHttp = (await (await fetch(`${server.url}/openapi.json`)).json()) as OpenApiDocument;
      expect(overHttp.servers).toEqual([{ url: server.url, description: 'The service.' }]);
      expect(overHttp.paths).toEqual(doc.paths);
    } finally {
      await server.close();
    }
    expect((await sim.fetch(`${sim.baseUrl}/openapi.json`, { method: 'POST' })).status).toBe(405);
    // Not a path of the interface: below the prefix it is answered as any unknown path is.
    expect((await sim.fetch(`${sim.baseUrl}${API_PREFIX}/openapi.json`)).status).toBe(401);
  });
});

describe('the package ships it as partner-s2s-sdk/openapi.json', () => {
  const NOT_BUILT = `the packaged OpenAPI document is not checked: looked for dist/openapi.json in ${process.cwd()}, not there (run npm run build first)`;
  const built = existsSync('dist/openapi.json');
  skipOrFail(built, NOT_BUILT);

  it.runIf(built)('resolved by name through the exports, the same document, and imported as JSON', () => {
    // The package resolves its own name: what a partner's require or import reaches.
    const file = createRequire(import.meta.url).resolve('partner-s2s-sdk/openapi.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(doc);
    const imported = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import doc from 'partner-s2s-sdk/openapi.json' with { type: 'json' }; console.log(doc.openapi);",
      ],
      { encoding: 'utf8' },
    );
    expect(imported.stderr).toBe('');
    expect(imported.stdout.trim()).toBe(doc.openapi);
  });
});
