import * as z from 'zod';
import { KNOWN_SCOPES, meSchemas, tokenRequestSchema, tokenResponseSchema } from '../schemas/auth.js';
import { bridgeSchemas, TRANSFER_STATES } from '../schemas/bridge.js';
import { errorBodySchemas } from '../schemas/errors.js';
import { ENDPOINTS } from './endpoints.js';
import { constructArgs, quoteArgs, sendArgs } from './params.js';

/*
 * The schemas of the OpenAPI document, converted from the SDK's own zod schemas by
 * `z.toJSONSchema`: the records of the specification as components, each named as the SDK's type
 * of it, and each endpoint's answer and arguments straight from its row of the endpoint table. The
 * answers are read as the SDK reads them by default: open objects (fields it does not know are
 * kept), open enums.
 */

export type JsonSchema = Record<string, unknown>;
export type EndpointKey = keyof typeof ENDPOINTS;

/** A reference to a component. */
export const ref = (id: ComponentName) => ({ $ref: `#/components/schemas/${id}` });

/** The component of each endpoint's JSON body: the arguments its SDK method takes. */
export const BODY_NAMES = {
  quote: 'BridgeQuoteParams',
  construct: 'BridgeConstructParams',
  send: 'BridgeSendParams',
} as const satisfies Partial<Record<EndpointKey, ComponentName>>;

/** Ids of the schemas that are inlined where they are used instead of being components. */
const INLINE = '__';

interface Named {
  id: string;
  description?: string;
}

/** What each component is, in the specification's words. */
const DESCRIPTIONS = {
  BridgeRoute:
    'One direction between two chains: the reverse direction is a separate route with its own `routeId`, and each can be paused separately.',
  TokenSide: 'One side of a route. Decimals may differ between the two sides of one route.',
  RouteLimits:
    'Live bounds of a route in source-token units (from relayer liquidity, cached up to one minute); `maxAmount` is the largest amount that fills at the quoted speed. `null` in a route when the bridge cannot be reached: quote and construct then answer 503.',
  RouteTargets: 'The contracts the batch calls on the source chain: a verifier allowlists exactly these.',
  BridgeQuote:
    "An indicative price for bridging `amountIn`. Every amount is given twice: a decimal string in its token's own units, and a base-unit integer string (`…Raw`); a raw amount is never carried from one side of a route to the other. There is no platform fee on a bridge.",
  BridgeFeeEstimate:
    'The gas fee on an amount, and `finalAmount`: the amount minus that fee. It has the shape of the staking fee estimate, whose full field list is not shown; `feePercent` and `systemFeeUsd` are always 0 on a bridge.',
  BridgeBundle: 'An unsigned batch user operation on the source chain. Verify it before signing it.',
  BundleCall: 'One call of the batch on the source chain.',
  BundleAuthorization:
    'The EIP-7702 authorization to sign; `null` in a bundle when the wallet is already delegated on the source chain.',
  UserOperation: 'The unsigned user operation: it contains `sender`; its further fields are not shown.',
  BridgeConstructResult:
    'A built batch and its intent. The numbers of its `quote` are the ones that count, not those of an earlier quote call.',
  BridgeSendResult: 'What a submit returns.',
  BridgeTransfer:
    'A bridge transfer: the single-transfer read, and exactly the body of every bridge callback.',
  TransferSide: "One side of a transfer: chain, token and amount in that token's decimals.",
  TransferStatus:
    'A transfer state: the states the specification names, or one added later, which arrives as its string.',
  Me: "The token's permissions as individual scopes, never wildcards. Other fields of the answer are not shown.",
  Scope: 'A permission: one the specification names, or one added later.',
  TokenRequest:
    "The token endpoint's parameters: `client_id` and `client_secret` unless an HTTP Basic header carries them.",
  TokenResponse:
    'A bearer token. `expires_in` (default 3600) is authoritative; `scope` lists individual permissions, wildcards expanded.',
  OAuthError: "The token endpoint's error body (OAuth 2.0).",
  ErrorEnvelope:
    'The error body of every endpoint but the token endpoint. Clients branch on `code`, never on `message`; the complete list of codes is not shown.',
  ValidationFailedError:
    '400 `VALIDATION_FAILED`: `errors` lists each failure; `message` joins them with "; ".',
  InsufficientBalanceError:
    '400 `INSUFFICIENT_BALANCE`: the wallet cannot afford the batch. `token` is the token that is short; the figures are base units.',
  BridgeQuoteParams: "The price is for that user's wallet.",
  BridgeConstructParams:
    "One of `amount` and `maxAmount: true`. With `maxAmount`, the source balance less the gas fee is bridged, capped at the route's live `maxAmount`.",
  BridgeSendParams:
    '`signature` is `0xff00` followed by the EIP-191 signature over the 32 bytes of `bundle.userOpHash`; `authorization` only when `bundle.authorization` was not `null`.',
  AuthorizationSignature:
    'The EIP-7702 tuple signed for `bundle.authorization`, whose `chainId` is the source chain.',
};
export type ComponentName = keyof typeof DESCRIPTIONS;

/** The records the specification names, as components, each named as the SDK's type of it. */
function components(): [z.ZodType, ComponentName][] {
  const bridge = bridgeSchemas(false);
  const { route, transfer, constructResult } = bridge;
  const { bundle, quote } = constructResult.shape;
  const me = meSchemas(false).shape.data;
  const errors = errorBodySchemas();
  return [
    [route, 'BridgeRoute'],
    [route.shape.from, 'TokenSide'],
    [route.shape.limits.unwrap(), 'RouteLimits'],
    [route.shape.targets, 'RouteTargets'],
    [quote, 'BridgeQuote'],
    [bridge.feeEstimate.shape.data, 'BridgeFeeEstimate'],
    [bundle, 'BridgeBundle'],
    [bundle.shape.calls.element, 'BundleCall'],
    [bundle.shape.authorization.unwrap(), 'BundleAuthorization'],
    [bundle.shape.userOp, 'UserOperation'],
    [constructResult, 'BridgeConstructResult'],
    [bridge.send.shape.data, 'BridgeSendResult'],
    [transfer, 'BridgeTransfer'],
    [transfer.shape.source, 'TransferSide'],
    [transfer.shape.status, 'TransferStatus'],
    [me, 'Me'],
    [me.shape.scopes.element, 'Scope'],
    [tokenRequestSchema, 'TokenRequest'],
    [tokenResponseSchema, 'TokenResponse'],
    [errors.oauth, 'OAuthError'],
    [errors.envelope, 'ErrorEnvelope'],
    [errors.validationFailed, 'ValidationFailedError'],
    [errors.insufficientBalance, 'InsufficientBalanceError'],
    [quoteArgs, 'BridgeQuoteParams'],
    [constructArgs, 'BridgeConstructParams'],
    [sendArgs, 'BridgeSendParams'],
    [sendArgs.unwrap().shape.authorization.unwrap(), 'AuthorizationSignature'],
  ];
}

/** Open enums: a string, documented with the values the specification names. */
function openEnums(): Map<unknown, readonly string[]> {
  const me = meSchemas(false).shape.data;
  return new Map<unknown, readonly string[]>([
    [bridgeSchemas(false).transfer.shape.status, TRANSFER_STATES],
    [me.shape.scopes.element, KNOWN_SCOPES],
  ]);
}

/** What the conversion gives the document. */
export interface ConvertedSchemas {
  /** The named records, by name. */
  components: Record<string, JsonSchema>;
  /** Each endpoint's answer (`{ data }`), where a zod schema reads it, by the endpoint's key. */
  answers: Partial<Record<EndpointKey, JsonSchema>>;
  /** Each GET endpoint's arguments, one property a parameter, by the endpoint's key. */
  parameters: Partial<Record<EndpointKey, JsonSchema>>;
}

/** Every schema of the document, converted in one pass so that each names the components it uses. */
export function convertSchemas(): ConvertedSchemas {
  const registry = z.registry<Named>();
  for (const [schema, id] of components()) registry.add(schema, { id, description: DESCRIPTIONS[id] });
  for (const [key, row] of Object.entries(ENDPOINTS)) {
    const answer = row.schema(false);
    if (answer instanceof z.ZodType) registry.add(answer, { id: `${INLINE}answer.${key}` });
    if (row.args && row.method === 'GET') registry.add(row.args, { id: `${INLINE}parameters.${key}` });
  }
  const known = openEnums();
  const { schemas } = z.toJSONSchema(registry, {
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      const values = known.get(zodSchema);
      if (!values) return;
      delete jsonSchema.type;
      jsonSchema.anyOf = [{ type: 'string', enum: [...values] }, { type: 'string' }];
    },
  });
  const converted: ConvertedSchemas = { components: {}, answers: {}, parameters: {} };
  for (const [id, schema] of Object.entries(schemas)) {
    // Each schema stands in the document, not on its own.
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonSchema;
    if (!id.startsWith(INLINE)) converted.components[id] = rest;
    else {
      const [kind, key] = id.slice(INLINE.length).split('.') as ['answer' | 'parameters', EndpointKey];
      converted[kind === 'answer' ? 'answers' : 'parameters'][key] = rest;
    }
  }
  return converted;
}
