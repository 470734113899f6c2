/**
 * The published interfaces and the zod schemas that read the wire must say the same thing: each
 * check fails to compile (`npm run typecheck`, which includes test/) when a field is added,
 * removed, made optional or retyped on either side. Index signatures (`[field: string]: unknown`,
 * what a forward-compatible loose schema adds) are left out of the comparison.
 */
import { expectTypeOf } from 'vitest';
import type { z } from 'zod';
import type { InsufficientBalanceError, ValidationFailedError } from '../src/errors/api-error.js';
import type {
  BridgeConstructParams,
  BridgeFeeEstimateParams,
  BridgeQuoteParams,
  BridgeSendParams,
  constructArgs,
  feeEstimateArgs,
  getArgs,
  listArgs,
  quoteArgs,
  sendArgs,
  TransferGetParams,
  TransferListParams,
} from '../src/resources/params.js';
import type { Me, meSchemas } from '../src/schemas/auth.js';
import type {
  BridgeConstructResult,
  BridgeFeeEstimate,
  BridgeQuote,
  BridgeRoute,
  BridgeSchemas,
  BridgeSendResult,
  BridgeTransfer,
} from '../src/schemas/bridge.js';
import type { insufficientBalanceSchema, validationFailedSchema } from '../src/schemas/errors.js';
import type {
  BridgeCallbackKind,
  CALLBACK_KINDS,
  KnownTransferStatus,
  TRANSFER_STATES,
} from '../src/schemas/states.js';

/** `T` without index signatures, all the way down. */
type Known<T> = T extends readonly (infer Item)[]
  ? Known<Item>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : number extends K ? never : K]: Known<T[K]> }
    : T;

type Output<Name extends keyof BridgeSchemas> = Known<z.output<BridgeSchemas[Name]>>;

// Responses: schema output and interface, both ways.
expectTypeOf<Output<'transfer'>>().toEqualTypeOf<Known<BridgeTransfer>>();
expectTypeOf<Output<'route'>>().toEqualTypeOf<Known<BridgeRoute>>();
expectTypeOf<Output<'constructResult'>>().toEqualTypeOf<Known<BridgeConstructResult>>();
expectTypeOf<Output<'routes'>>().toEqualTypeOf<Known<{ data: BridgeRoute[] }>>();
expectTypeOf<Output<'quote'>>().toEqualTypeOf<Known<{ data: BridgeQuote }>>();
expectTypeOf<Output<'feeEstimate'>>().toEqualTypeOf<Known<{ data: BridgeFeeEstimate }>>();
expectTypeOf<Output<'construct'>>().toEqualTypeOf<Known<{ data: BridgeConstructResult }>>();
expectTypeOf<Output<'send'>>().toEqualTypeOf<Known<{ data: BridgeSendResult }>>();
expectTypeOf<Output<'transferRead'>>().toEqualTypeOf<Known<{ data: BridgeTransfer }>>();
expectTypeOf<Known<z.output<ReturnType<typeof meSchemas>>>>().toEqualTypeOf<Known<{ data: Me }>>();

// Error bodies: what the schemas read is what the error classes carry.
expectTypeOf<z.output<typeof insufficientBalanceSchema>>().toEqualTypeOf<{
  -readonly [K in 'token' | 'required' | 'available' | 'shortfall']: InsufficientBalanceError[K];
}>();
expectTypeOf<z.output<typeof validationFailedSchema>['errors']>().toEqualTypeOf<
  ValidationFailedError['errors']
>();

// The open fields stay open: a state or scope added by the service later still types.
expectTypeOf<'settling'>().toExtend<BridgeTransfer['status']>();

// Requests: the argument schemas take exactly the fields the params interfaces name. (Their input
// types are `unknown` where they check a caller's value, e.g. an amount, so only the names compare.)
type Fields<T> = T extends unknown ? keyof T : never;
expectTypeOf<keyof z.input<typeof quoteArgs>>().toEqualTypeOf<keyof BridgeQuoteParams>();
expectTypeOf<keyof z.input<typeof feeEstimateArgs>>().toEqualTypeOf<keyof BridgeFeeEstimateParams>();
expectTypeOf<keyof z.input<typeof constructArgs>>().toEqualTypeOf<Fields<BridgeConstructParams>>();
expectTypeOf<keyof z.input<typeof sendArgs>>().toEqualTypeOf<keyof BridgeSendParams>();
expectTypeOf<keyof z.input<typeof listArgs>>().toEqualTypeOf<keyof TransferListParams>();
expectTypeOf<keyof z.input<typeof getArgs>>().toEqualTypeOf<keyof TransferGetParams>();
expectTypeOf<keyof NonNullable<z.output<typeof sendArgs>['authorization']>>().toEqualTypeOf<
  keyof NonNullable<BridgeSendParams['authorization']>
>();
expectTypeOf<z.output<typeof listArgs>['status']>().toEqualTypeOf<KnownTransferStatus | undefined>();

// The state table: the published tuples keep their literal types.
expectTypeOf<(typeof TRANSFER_STATES)[number]>().toEqualTypeOf<KnownTransferStatus>();
expectTypeOf<typeof TRANSFER_STATES>().toEqualTypeOf<
  readonly [
    'pending',
    'submitted',
    'source_confirmed',
    'delivered',
    'refund_pending',
    'refunded',
    'failed',
    'expired',
  ]
>();
expectTypeOf<(typeof CALLBACK_KINDS)[number]>().toEqualTypeOf<BridgeCallbackKind>();
expectTypeOf<BridgeCallbackKind>().toEqualTypeOf<`bridge_transfer_${Exclude<KnownTransferStatus, 'pending' | 'expired'>}`>();
