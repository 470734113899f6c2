import * as z from 'zod';
import { exactlyOneSecret, secretsShape } from '../../callbacks/standard-webhooks.js';
import { durationMs } from '../../core/args.js';
import { type BridgeTransfer, bridgeSchemas, TRANSFER_STATES } from '../../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address, type Hex, matching } from '../../schemas/common.js';

/*
 * The argument schemas of the testing entry, one per public function and simulator method. They are
 * the only place where what a caller may pass is decided, so that a future admin API of the
 * simulator can validate every call with the very same rules.
 */

// Not the SDK's `nonEmptyString`: that one trims, and the simulator keeps ids and scopes exactly.
const text = z.string({ error: 'must be a string' }).min(1, 'must not be empty');
const address = matching<Address>(
  z.string({ error: 'must be a string' }),
  ADDRESS_PATTERN,
  'must be a 0x-prefixed 20-byte hex address',
);
const hexData = matching<Hex>(
  z.string({ error: 'must be a string' }),
  /^0x([0-9a-fA-F]{2})*$/,
  'must be 0x-prefixed hex of whole bytes',
);
/** What `BigInt()` takes without throwing: a non-empty hex or decimal literal, a bigint or an integer. */
const quantity = z.union(
  [z.string().regex(/^(0x[0-9a-fA-F]+|\d+)$/), z.bigint().nonnegative(), z.int().nonnegative()],
  { error: 'must be a non-negative hex or decimal integer' },
);
const chainId = z.int({ error: 'must be an integer chain id' }).positive('must be a positive chain id');
const uint32 = z
  .int({ error: 'must be an integer' })
  .min(0, 'must not be negative')
  .max(2 ** 32 - 1, 'must fit in 32 bits');
/** Said of a value that must be a bigint; the admin API says it in JSON's words (admin-http.ts). */
export const BIGINT_MESSAGE = 'must be a bigint';
/** Said of a callback target; over HTTP a function cannot be sent, and the admin API says so. */
export const CALLBACK_TARGET_MESSAGE = 'must be an http(s) URL or a function';
const uint = (bits: number) =>
  z
    .bigint({ error: BIGINT_MESSAGE })
    .nonnegative('must not be negative')
    .max((1n << BigInt(bits)) - 1n, `must fit in ${bits} bits`);
const baseUnits = uint(256);
const scopes = z.array(text, { error: 'must be an array of scope strings' });
/** Basis points of the amount; above 10 000 a fee would exceed the amount itself. */
const basisPoints = z
  .bigint({ error: BIGINT_MESSAGE })
  .nonnegative('must not be negative')
  .max(10_000n, 'must be at most 10000 (the whole amount)');
const milliseconds = z
  .number({ error: 'must be a number of milliseconds' })
  .nonnegative('must not be negative')
  .refine(Number.isFinite, 'must be finite');
const seconds = z.int({ error: 'must be a whole number of seconds' }).positive('must be positive');
const callbackTarget = z.union(
  [
    z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    z.custom<(body: BridgeTransfer) => void | Promise<void>>((value) => typeof value === 'function'),
  ],
  { error: CALLBACK_TARGET_MESSAGE },
);
const headers = z.record(z.string(), z.string({ error: 'must be a string' })).superRefine((value, ctx) => {
  try {
    new Headers(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be valid HTTP header names and values' });
  }
});

/** `createPartnerSimulator` and `new PartnerSimulator`. */
export const simulatorOptionsArgs = z
  .strictObject({
    autoAdvance: z
      .union([
        z.boolean(),
        z.strictObject({ sourceConfirmedMs: durationMs.optional(), deliveredMs: durationMs.optional() }),
      ])
      .optional(),
    tokenTtlSec: seconds.optional(),
    quoteTtlSec: seconds.optional(),
    callbacks: callbackTarget.optional(),
    callbackHeaders: headers.optional(),
    callbackSigning: z.strictObject(secretsShape()).superRefine(exactlyOneSecret).optional(),
    demo: z.boolean({ error: 'must be a boolean' }).optional(),
    seed: z.int({ error: 'must be an integer' }).nonnegative('must not be negative').optional(),
    adminToken: z
      .string({ error: 'must be a string' })
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in a header)')
      .optional(),
    chain: z
      .strictObject({
        rpcUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL of a JSON-RPC node' }),
        // The value is never part of the message: a key must not reach a log.
        bundlerPrivateKey: z
          .string({ error: 'must be a string' })
          .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key')
          .optional(),
      })
      .optional(),
  })
  .optional();

/** `encodeBatchCallData`. */
export const batchCallsArgs = z.array(z.looseObject({ target: address, value: quantity, data: hexData }), {
  error: 'must be an array of calls',
});

/** `buildBridgeBundle`. */
export const buildBundleArgs = z.strictObject({
  route: bridgeSchemas(false).route,
  wallet: address,
  amountInRaw: baseUnits,
  amountOutRaw: baseUnits,
  gasFeeRaw: baseUnits,
  quoteTimestamp: uint32,
  fillDeadline: uint32,
  authorizationNonce: z.int({ error: 'must be an integer or null' }).nonnegative().nullable(),
  entryPoint: address.optional(),
  delegate: address.optional(),
  depositFunction: z.enum(['deposit', 'depositV3']).optional(),
  exclusiveRelayer: address.optional(),
  exclusivityParameter: uint32.optional(),
  paymaster: address.nullable().optional(),
  sequence: uint(64).optional(),
  nonceKey: uint(192).optional(),
});

const PAYMASTER_GAS_FIELDS = ['paymasterVerificationGasLimit', 'paymasterPostOpGasLimit'] as const;

/**
 * `rehashBundle`. The keys are listed in the order a built bundle has them, as the parsed copy is
 * what gets hashed and returned, and a bundle's JSON text is what a verified batch digests.
 */
export const rehashArgs = z.looseObject({
  // Chain 0 is no chain, but a forger may claim it, and tests of the verifier hash it so.
  chainId: z.int({ error: 'must be an integer chain id' }).nonnegative('must not be negative'),
  entryPoint: address,
  delegate: address,
  calls: z.array(z.unknown(), { error: 'must be an array of calls' }),
  userOp: z
    .looseObject({
      sender: address,
      nonce: quantity,
      callData: hexData,
      callGasLimit: quantity,
      verificationGasLimit: quantity,
      preVerificationGas: quantity,
      maxFeePerGas: quantity,
      maxPriorityFeePerGas: quantity,
    })
    .superRefine((userOp, ctx) => {
      const check = (field: string, schema: z.ZodType, when: unknown) => {
        if (!when) return;
        const result = schema.safeParse(userOp[field]);
        if (!result.success)
          ctx.addIssue({ code: 'custom', path: [field], message: result.error.issues[0]!.message });
      };
      check('factory', hexData, userOp.factory);
      check('factoryData', hexData.optional(), userOp.factory);
      check('paymaster', address, userOp.paymaster);
      for (const field of PAYMASTER_GAS_FIELDS) check(field, quantity, userOp.paymaster);
      check('paymasterData', hexData.optional(), userOp.paymaster);
    }),
  userOpHash: z.string({ error: 'must be a string' }),
  authorization: z
    .strictObject({ chainId: z.int().nonnegative(), address, nonce: z.int().nonnegative() })
    .nullable(),
});

/** How the simulator's argument schemas find what an id names; `undefined` when nothing. */
export interface SimulatorLookups<Organisation, Credential, User, Route, Transfer> {
  organisation(id: string): Organisation | undefined;
  credential(id: string): Credential | undefined;
  user(id: string): User | undefined;
  route(id: string): Route | undefined;
  /** The transfer as of now: a quote that ran out has already made it `expired`. */
  transfer(id: string): Transfer | undefined;
  /** A transfer's state and the states the service could move it to from there. */
  transferState(transfer: Transfer): { status: string; next: readonly string[] };
}

/** An id that must name something the simulator holds; parses to that thing. */
function known<T>(what: string, find: (id: string) => T | undefined) {
  return text.transform((id, ctx) => {
    const found = find(id);
    if (found === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `no ${what} ${JSON.stringify(id.slice(0, 80))} in this simulator`,
      });
      return z.NEVER;
    }
    return found;
  });
}

/**
 * The schemas of the simulator's methods, keyed by method name. Each checks the method's arguments
 * as one object named after its parameters, and turns every id into what it names.
 */
export function simulatorArgs<O, C, U, R, T>(find: SimulatorLookups<O, C, U, R, T>) {
  const organisation = known('organisation', find.organisation);
  const credential = known('credential', find.credential);
  const user = known('user', find.user);
  const route = known('route', find.route);
  const transfer = known('transfer', find.transfer);
  const token = address;
  return {
    advanceClock: z.object({ ms: milliseconds }),
    createOrganisation: z.object({
      params: z.strictObject({
        scopes,
        id: text
          .refine((id) => find.organisation(id) === undefined, 'an organisation with this id exists')
          .optional(),
      }),
    }),
    withdrawOrganisationScope: z.object({ organisationId: organisation, scope: text }),
    setOrganisationActive: z.object({
      organisationId: organisation,
      active: z.boolean({ error: 'must be a boolean' }),
    }),
    createCredential: z.object({ params: z.strictObject({ organisationId: organisation, scopes }) }),
    revokeCredential: z.object({ clientId: credential }),
    rotateCredential: z.object({ clientId: credential, params: z.strictObject({ graceMs: milliseconds }) }),
    createUser: z.object({
      params: z.strictObject({
        organisationId: organisation,
        wallet: z.union([z.boolean(), address], { error: 'must be a boolean or an address' }).optional(),
      }),
    }),
    fund: z.object({ userId: user, chainId, token, raw: baseUnits }),
    balance: z.object({ userId: user, chainId, token }),
    configureRoute: z.object({
      routeId: route,
      change: z
        .strictObject({
          paused: z.boolean({ error: 'must be a boolean' }).optional(),
          reachable: z.boolean({ error: 'must be a boolean' }).optional(),
          gasFeeRaw: baseUnits.optional(),
          providerFeeBps: basisPoints.optional(),
          feeCeilingBps: basisPoints.optional(),
          minAmountRaw: baseUnits.optional(),
          maxAmountRaw: baseUnits.optional(),
          signWindowSec: z
            .number({ error: 'must be a number of seconds' })
            .nonnegative('must not be negative')
            .refine(Number.isFinite, 'must be finite')
            .optional(),
          depositFunction: z
            .enum(['deposit', 'depositV3'], { error: 'must be deposit or depositV3' })
            .optional(),
        })
        .refine(
          (change) =>
            change.minAmountRaw === undefined ||
            change.maxAmountRaw === undefined ||
            change.minAmountRaw <= change.maxAmountRaw,
          { path: ['maxAmountRaw'], message: 'must not be below minAmountRaw' },
        ),
    }),
    setCallbacks: z.object({ target: callbackTarget.optional() }),
    transfer: z.object({ transferId: transfer }),
    advance: z
      .object({
        transferId: transfer,
        status: z.enum(TRANSFER_STATES, { error: `must be one of ${TRANSFER_STATES.join(', ')}` }),
        details: z.strictObject({ failureReason: z.string({ error: 'must be a string' }).optional() }),
      })
      .superRefine((args, ctx) => {
        const { status, next } = find.transferState(args.transferId);
        if (next.includes(args.status)) return;
        const allowed = next.length > 0 ? `it can go to ${next.join(' or ')}` : `${status} is final`;
        ctx.addIssue({
          code: 'custom',
          path: ['status'],
          message: `a transfer cannot go from ${status} to ${args.status}: ${allowed}`,
        });
      }),
    listen: z.object({
      port: z
        .int({ error: 'must be an integer port' })
        .min(0, 'must not be negative')
        .max(65_535, 'must be at most 65535'),
      host: text.optional(),
    }),
  };
}
