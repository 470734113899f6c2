import * as z from 'zod';
import { type AmountInput, decimalLiteral } from '../core/amounts.js';
import { durationMs, nonEmptyString, requestOptionsSchema, withMethods } from '../core/args.js';
import { API_PREFIX } from '../core/defaults.js';
import { JsonNumber } from '../core/json.js';
import { type AuthorizationSignature, TRANSFER_STATES, type TransferStatus } from '../schemas/bridge.js';
import type { Hex } from '../schemas/common.js';

/** What `bridge.quote` takes. */
export interface BridgeQuoteParams {
  userId: string;
  routeId: string;
  /** Source-token units. */
  amount: AmountInput;
}

/** What `bridge.feeEstimate` takes. */
export interface BridgeFeeEstimateParams {
  routeId: string;
  /** Source-token units: the wallet balance to estimate a `maxAmount` bridge for. */
  amount: AmountInput;
}

/** Either an `amount`, or `maxAmount: true` to bridge the balance less the gas fee. Never both. */
export type BridgeConstructParams =
  | { userId: string; routeId: string; amount: AmountInput; maxAmount?: false }
  | { userId: string; routeId: string; maxAmount: true; amount?: undefined };

/** What `bridge.send` takes: the ids, and the signatures from `signBridgeBatch`. */
export interface BridgeSendParams {
  userId: string;
  intentId: string;
  /** `0xff00` ‖ the 65-byte EIP-191 signature over `userOpHash` (67 bytes). */
  signature: Hex;
  /** Only when the bundle's `authorization` was not null. */
  authorization?: AuthorizationSignature | undefined;
}

/** What `bridge.transfers.list` takes. */
export interface TransferListParams {
  userId: string;
  /** Only transfers in this state. */
  status?: TransferStatus;
  /** Page size, 1 to 100. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** What `bridge.transfers.get` takes. */
export interface TransferGetParams {
  userId: string;
  transferId: string;
}

// The schemas here are z.lazy: each is built on the first call that checks its arguments, not at
// import. Their `meta` says in JSON Schema what a transform or refinement checks, for the OpenAPI
// document (`z.toJSONSchema` cannot read code).
const amount = z
  .lazy(() =>
    z.unknown().transform((value, ctx) => {
      const checked = decimalLiteral(value);
      if ('error' in checked) {
        ctx.addIssue({ code: 'custom', message: checked.error });
        return z.NEVER;
      }
      return new JsonNumber(checked.literal);
    }),
  )
  // On the wire a JSON number, written digit for digit from the decimal the caller gave.
  .meta({ type: 'number', exclusiveMinimum: 0, description: 'In source-token units.' });

const hexBytes = (bytes: number) =>
  z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`), `must be ${bytes} bytes of 0x-prefixed hex`);

export const quoteArgs = z.lazy(() =>
  z.strictObject({ userId: nonEmptyString, routeId: nonEmptyString, amount }),
);
export const feeEstimateArgs = z.lazy(() => z.strictObject({ routeId: nonEmptyString, amount }));

/** `bridge.construct`'s arguments once checked: ids trimmed, the amount a decimal literal. */
export type ConstructArgs = z.output<typeof constructArgs>;

export const constructArgs = z.lazy(() =>
  z
    .strictObject({
      userId: nonEmptyString,
      routeId: nonEmptyString,
      amount: amount.optional(),
      maxAmount: z.boolean({ error: 'must be true or false' }).optional(),
    })
    .superRefine((value, ctx) => {
      if (value.maxAmount === true && value.amount !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: 'give either amount or maxAmount: true, not both',
          path: ['maxAmount'],
        });
      } else if (value.maxAmount !== true && value.amount === undefined) {
        ctx.addIssue({ code: 'custom', message: 'required unless maxAmount is true', path: ['amount'] });
      }
    })
    .meta({
      oneOf: [
        { required: ['amount'], properties: { maxAmount: { const: false } } },
        {
          required: ['maxAmount'],
          properties: { maxAmount: { const: true } },
          not: { required: ['amount'] },
        },
      ],
    }),
);

export const sendArgs = z.lazy(() =>
  z.strictObject({
    userId: nonEmptyString,
    intentId: nonEmptyString,
    signature: hexBytes(67).refine(
      (value) => value.slice(0, 6).toLowerCase() === '0xff00',
      'must start with 0xff00',
    ),
    authorization: z
      .strictObject({
        r: hexBytes(32),
        s: hexBytes(32),
        yParity: z.union([z.literal(0), z.literal(1)], { error: 'must be 0 or 1' }),
      })
      .optional(),
  }),
);

export const listArgs = z.lazy(() =>
  z.strictObject({
    userId: nonEmptyString,
    status: z.enum(TRANSFER_STATES, { error: `must be one of ${TRANSFER_STATES.join(', ')}` }).optional(),
    limit: z
      .int({ error: 'must be an integer' })
      .min(1, 'must be at least 1')
      .max(100, 'must be at most 100')
      .optional(),
    cursor: nonEmptyString.optional(),
  }),
);

/**
 * Why a path segment is refused, if it is: as sent, and as every server or proxy on the way may
 * read it once it decodes it again (`%252e%252e` is `..` after two decodes), it must stay one
 * segment and not be `.` or `..`, also with a `;` parameter or a NUL after it (`..;` is `..` to
 * Tomcat behind a proxy that saw a plain name).
 */
export function segmentProblem(segment: string): string | undefined {
  let form = segment;
  for (let depth = 0; depth < 8; depth++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(form);
    } catch {
      // Not decodable at all is a typo; a form that stops decoding further is plain text.
      if (depth === 0) return 'holds a malformed percent-encoding';
      return undefined;
    }
    const name = decoded.split(/[;\0]/)[0] as string;
    if (name === '.' || name === '..' || /[/\\]/.test(decoded))
      return `must not hold \`.\` or \`..\` segments or encoded slashes, also encoded twice: it would leave ${API_PREFIX}`;
    if (decoded === form) return undefined;
    form = decoded;
  }
  return 'is percent-encoded too many times over';
}

/**
 * Whether a `params` value would leave its segment: encoded it is one segment for the SDK, but a
 * proxy that decodes `%2F` reads `../..` as a way out of the prefix. A lone surrogate cannot be
 * encoded at all.
 */
export function paramProblem(value: string): boolean {
  let encoded: string;
  try {
    encoded = encodeURIComponent(value);
  } catch {
    return true;
  }
  return segmentProblem(encoded) !== undefined;
}

/**
 * An id that becomes a path segment. Encoding keeps a slash inside one segment, but `.` and `..`
 * would still be read as dot segments (the list endpoint, another path) by the URL parser or a
 * proxy, and encoded dots or separators, or `..;`, by a proxy that decodes once more: all are
 * refused.
 */
const pathId = z.lazy(() =>
  nonEmptyString.refine(
    (value) => value !== '.' && value !== '..' && !/[/\\]|%2e|%2f|%5c/i.test(value) && !paramProblem(value),
    'must be an id: no slashes, no "." or ".." segments',
  ),
);

export const getArgs = z.lazy(() => z.strictObject({ userId: nonEmptyString, transferId: pathId }));

export const waitArgs = z.lazy(() =>
  z.strictObject({
    userId: nonEmptyString,
    transferId: pathId,
    until: z.enum(TRANSFER_STATES, { error: `must be one of ${TRANSFER_STATES.join(', ')}` }).optional(),
  }),
);

export const waitOptionsSchema = z.lazy(() =>
  requestOptionsSchema
    .unwrap()
    .extend({
      router: withMethods(['on', 'off'], 'must have on and off methods (a callback router)').optional(),
      totalTimeoutMs: durationMs.optional(),
      pollIntervalMs: durationMs.optional(),
      maxPollIntervalMs: durationMs.optional(),
      phaseTimeoutsMs: z
        .strictObject(
          {
            sourceConfirmation: durationMs.optional(),
            delivery: durationMs.optional(),
            refund: durationMs.optional(),
          },
          { error: 'must be an object with any of sourceConfirmation, delivery, refund' },
        )
        .optional(),
    })
    // `timeoutMs` is the deprecated name of `totalTimeoutMs` here: two answers to one question.
    .refine((options) => options.timeoutMs === undefined || options.totalTimeoutMs === undefined, {
      path: ['timeoutMs'],
      message: 'is the deprecated name of totalTimeoutMs: give totalTimeoutMs only',
    }),
);
