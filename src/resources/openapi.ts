import * as z from 'zod';
import { TOKEN_PATH } from '../auth/token-endpoint.js';
import { parseArgs } from '../core/args.js';
import { API_PREFIX } from '../core/defaults.js';
import { VERSION } from '../core/version.js';
import type { KnownScope } from '../schemas/auth.js';
import { CALLBACK_KINDS } from '../schemas/states.js';
import { ENDPOINTS } from './endpoints.js';
import {
  BODY_NAMES,
  type ComponentName,
  type ConvertedSchemas,
  convertSchemas,
  type EndpointKey,
  type JsonSchema,
  ref,
} from './openapi-schemas.js';
import { transferPageJsonSchema } from './transfer-page.js';

/*
 * The OpenAPI 3.1 document of the Partner Service Interface, generated from what the SDK runs: the
 * paths, methods, scopes and arguments of the endpoint table, the answers its zod schemas read
 * (openapi-schemas.ts), the token endpoint and the callback body. Only what the specification
 * shows: what it leaves open stays open.
 */

/**
 * An OpenAPI 3.1 document, as JSON.
 *
 * @example
 * const doc: OpenApiDocument = openApiDocument();
 * console.log(Object.keys(doc.paths));
 */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string; variables?: Record<string, { default: string }> }[];
  paths: Record<string, Record<string, JsonSchema>>;
  webhooks: Record<string, Record<string, JsonSchema>>;
  components: Record<string, Record<string, JsonSchema>>;
  [field: string]: unknown;
}

/** What `openApiDocument` takes. */
export interface OpenApiDocumentOptions {
  /**
   * The service's base URL (without `/api/v1/s2s`), the document's server; by default a variable
   * `baseUrl` that a tool asks for.
   */
  baseUrl?: string;
}

/** What each scope grants, in the specification's words. A scope it names and this lacks fails to compile. */
const SCOPES: Record<KnownScope, string> = {
  'pools:read': 'staking pools and their TVL/APY history',
  'stocks:read': 'stock catalogue, prices, quotes, charts',
  'bridge:read':
    'bridge routes, quotes, transfers; building and submitting a bridge needs it and transactions:write',
  'users:read': 'users the partner created',
  'users:write': 'creating, updating, closing users',
  'portfolio:read': "a user's balances, value history, open positions",
  'transactions:read': "a user's indexed transfers",
  'transactions:write': 'building and submitting staking transactions, stock trades and bridges',
  'rates:read': 'reserved for endpoints not yet exposed',
  'all:read': 'every scope ending in :read, including future ones',
  'all:write': 'every scope ending in :write, including future ones',
};

/** What each endpoint does, in the specification's words, and the SDK method that calls it. */
const SUMMARIES: Record<EndpointKey, string> = {
  me: "The token's permissions. SDK: `client.me()`.",
  routes:
    'The bridge routes, one per direction: the source of truth for available directions. SDK: `client.bridge.routes()`.',
  quote: 'An indicative quote for a user. SDK: `client.bridge.quote()`.',
  feeEstimate:
    'The gas fee on an amount, without reading a wallet or calling the bridge. SDK: `client.bridge.feeEstimate()`.',
  construct:
    'Builds the unsigned batch and its intent, after checking the wallet holds `amount + gasFee`. SDK: `client.bridge.construct()`.',
  send: 'Submits the signed batch of an intent, before `quote.expiresAt`; a late or repeated submit is a 400. SDK: `client.bridge.send()`.',
  transfers: "A user's transfers, newest first, a page at a time. SDK: `client.bridge.transfers.list()`.",
  transfer: 'One bridge transfer. SDK: `client.bridge.transfers.get()`.',
};

/** The endpoints whose route must be reachable: 503 when the bridge is not, or its fee too high. */
const NEEDS_BRIDGE: ReadonlySet<EndpointKey> = new Set(['quote', 'construct']);

/** Fields whose unknown value is a 404: the user, route or transfer is not the partner's. */
const IDS = new Set(['userId', 'routeId', 'transferId']);

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** The error answers every data endpoint shares. */
const RESPONSES = {
  BadRequest: {
    description:
      "The request cannot be taken: `VALIDATION_FAILED` (with `errors`), `WALLET_NOT_LINKED`, `INTENT_NOT_FOUND` (a spent or expired intent), a paused route, an amount outside the route's limits. Not retried.",
    content: json({ anyOf: [ref('ValidationFailedError'), ref('ErrorEnvelope')] }),
  },
  Unauthorized: {
    description:
      'A missing, malformed, expired or revoked access token: fetch a new one. A fresh token refused as well means the credential or organisation is stopped.',
    headers: {
      'WWW-Authenticate': {
        description: 'Bearer; with `error="invalid_token"` only when a token was presented and rejected.',
        schema: { type: 'string' },
      },
    },
    content: json(ref('ErrorEnvelope')),
  },
  Forbidden: {
    description: 'A valid token without the scope the endpoint requires; retrying does not help.',
    content: json(ref('ErrorEnvelope')),
  },
  NotFound: {
    description:
      'No such route, transfer or user, or one of another partner (not proof that the id is wrong).',
    content: json(ref('ErrorEnvelope')),
  },
  Unavailable: {
    description:
      "The bridge cannot be reached, its fee is above the route's ceiling, or the quote expires too soon to sign. Retry shortly.",
    content: json(ref('ErrorEnvelope')),
  },
  Error: {
    description: 'Any other error, in the same envelope. 5xx and timeouts are retried with backoff.',
    content: json(ref('ErrorEnvelope')),
  },
};

/** The arguments of a row as the document shows them: query and path parameters, or a JSON body. */
function request(key: EndpointKey, converted: ConvertedSchemas): { fields: string[]; parts: JsonSchema } {
  const { path, method } = ENDPOINTS[key];
  const body = (BODY_NAMES as Partial<Record<EndpointKey, ComponentName>>)[key];
  if (method === 'POST') {
    if (!body) throw new Error(`${key}: a POST endpoint needs the name of its body`);
    const fields = Object.keys((converted.components[body]?.properties ?? {}) as object);
    return { fields, parts: { requestBody: { required: true, content: json(ref(body)) } } };
  }
  const args = converted.parameters[key];
  if (!args) return { fields: [], parts: {} };
  const properties = args.properties as Record<string, JsonSchema>;
  const required = new Set(args.required as string[]);
  const parameters = Object.entries(properties).map(([name, schema]) => {
    const inPath = path.includes(`{${name}}`);
    return { name, in: inPath ? 'path' : 'query', required: inPath || required.has(name), schema };
  });
  return { fields: Object.keys(properties), parts: { parameters } };
}

/** One data endpoint: its arguments, scopes and every answer it may give. */
function operation(key: EndpointKey, converted: ConvertedSchemas): JsonSchema {
  const row = ENDPOINTS[key];
  const { fields, parts } = request(key, converted);
  const answer = converted.answers[key] ?? transferPageJsonSchema(ref('BridgeTransfer'));
  const responses: Record<string, unknown> = { 200: { description: 'OK', content: json(answer) } };
  if (fields.length > 0)
    responses[400] =
      key === 'construct'
        ? {
            ...RESPONSES.BadRequest,
            content: json({
              anyOf: [ref('InsufficientBalanceError'), ref('ValidationFailedError'), ref('ErrorEnvelope')],
            }),
          }
        : response('BadRequest');
  responses[401] = response('Unauthorized');
  if (row.scopes.length > 0) responses[403] = response('Forbidden');
  if (fields.some((field) => IDS.has(field))) responses[404] = response('NotFound');
  if (NEEDS_BRIDGE.has(key)) responses[503] = response('Unavailable');
  responses.default = response('Error');
  return {
    operationId: row.name.replace(/\.(\w)/g, (_, letter: string) => letter.toUpperCase()),
    tags: ['bridge'],
    summary: SUMMARIES[key],
    security: [{ oauth2: [...row.scopes] }],
    ...parts,
    ...(row.retryable
      ? {}
      : {
          description:
            'Never retried blindly: after a timeout, read the transfer or confirm on chain by `userOpHash` before rebuilding.',
        }),
    responses,
  };
}

const tokenEndpoint = {
  post: {
    operationId: 'token',
    tags: ['auth'],
    summary: 'A bearer token for a client credential (OAuth 2.0 client credentials grant, RFC 6749 4.4).',
    description:
      'The credential goes in the body, or in an HTTP Basic header (client id as user, secret as password). The SDK caches the token and fetches a new one shortly before `expires_in` runs out.',
    security: [{}, { clientBasic: [] }],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': { schema: ref('TokenRequest') },
        'application/json': { schema: ref('TokenRequest') },
      },
    },
    responses: {
      200: {
        description: 'A token.',
        headers: { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } },
        content: json(ref('TokenResponse')),
      },
      400: {
        description:
          '`invalid_request` (missing or malformed parameters), `unsupported_grant_type`, or `invalid_scope` (a scope or wildcard the credential does not fully hold: never a silent downgrade).',
        content: json(ref('OAuthError')),
      },
      401: {
        description:
          '`invalid_client`: unknown client id, wrong secret, or credential or organisation not active.',
        content: json(ref('OAuthError')),
      },
    },
  },
};

const callback = {
  post: {
    operationId: 'bridgeTransferCallback',
    tags: ['bridge'],
    summary: 'A bridge transfer entered a state: the body is the transfer, as the single-transfer read.',
    description: `Sent when a transfer enters a state that has a callback kind: ${CALLBACK_KINDS.map((kind) => `\`${kind}\``).join(', ')} (\`bridge_transfer_<status>\`); \`pending\` and \`expired\` send none. Bridge callbacks go to the same endpoint as portfolio callbacks. Delivery mechanics (registering the endpoint, authenticating deliveries, headers, retries, ordering) are not shown. SDK: \`createCallbackRouter\`.`,
    requestBody: { required: true, content: json(ref('BridgeTransfer')) },
  },
};

const optionsSchema = z.lazy(() =>
  z
    .strictObject({
      baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
    })
    .optional(),
);

/**
 * The OpenAPI 3.1 document of the Partner Service Interface (as `partner-s2s-sdk/openapi.json`
 * ships it), generated from the SDK's own schemas: the token endpoint, `/me`, every bridge endpoint,
 * the error envelopes and the callback body as a webhook. What the specification leaves open stays
 * open: objects take more fields, enums more values. A new object at every call.
 *
 * @example
 * import { writeFileSync } from 'node:fs';
 * import { openApiDocument } from 'partner-s2s-sdk';
 * writeFileSync('partner-api.json', JSON.stringify(openApiDocument({ baseUrl: 'https://partner.example.com' }), null, 2));
 */
export function openApiDocument(options?: OpenApiDocumentOptions): OpenApiDocument {
  const checked = parseArgs(optionsSchema, options, 'openApiDocument');
  const converted = convertSchemas();
  const paths: OpenApiDocument['paths'] = { [`${API_PREFIX}${TOKEN_PATH}`]: tokenEndpoint };
  for (const key of Object.keys(ENDPOINTS) as EndpointKey[]) {
    const { method, path } = ENDPOINTS[key];
    paths[`${API_PREFIX}${path}`] = { [method.toLowerCase()]: operation(key, converted) };
  }
  const server = checked?.baseUrl
    ? { url: checked.baseUrl.replace(/\/+$/, ''), description: 'The service.' }
    : {
        url: '{baseUrl}',
        description: 'The service: its base URL, below which every path begins with /api/v1/s2s.',
        variables: { baseUrl: { default: 'https://partner.example.com' } },
      };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Partner Service Interface',
      version: VERSION,
      description: `Version 1 of the interface (${API_PREFIX}): the token endpoint, the bridge, errors and callbacks, as far as the specification shows them, generated from the schemas partner-s2s-sdk ${VERSION} reads answers with. Successful answers of data endpoints wrap their payload in \`data\`. What the specification leaves open stays open: objects may carry more fields and enums more values. Staking, stocks, users, pools, portfolio and the transfer index are not shown.`,
    },
    servers: [server],
    tags: [
      { name: 'auth', description: 'OAuth 2.0 client credentials: a short-lived bearer token.' },
      { name: 'bridge', description: 'The cross-chain bridge: routes, quotes, batches, transfers.' },
    ],
    paths,
    webhooks: { bridgeTransfer: callback },
    components: {
      schemas: converted.components,
      responses: RESPONSES,
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description:
            'A bearer token from the token endpoint, sent as `authorization: Bearer <token>`. Each endpoint requires its scopes; wildcards are expanded when a token is issued.',
          flows: { clientCredentials: { tokenUrl: `${API_PREFIX}${TOKEN_PATH}`, scopes: SCOPES } },
        },
        clientBasic: {
          type: 'http',
          scheme: 'basic',
          description: 'The token endpoint only: the client id as user, the secret as password.',
        },
      },
    },
  };
}
