import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { TrackerListOptions, TrackerRecord, TransferTracker } from '../src/index.js';
import * as main from '../src/index.js';
import * as postgres from '../src/postgres/index.js';
import * as redis from '../src/redis/index.js';
import type { TrackerRecord as StoredTrackerRecord, TrackerListRequest } from '../src/stores/index.js';
import * as stores from '../src/stores/index.js';
import * as testing from '../src/testing/index.js';

/**
 * The value names each entry of the package exports, written out (viem's `src/index.test.ts`), so
 * that every name added, moved or dropped shows in review as a change to this file. Types are not
 * values and leave no name at run time; `npm run check:exports` holds the built declarations'
 * values to the built modules.
 */

const ENTRIES: Record<string, Record<string, unknown>> = {
  'partner-s2s-sdk': main,
  'partner-s2s-sdk/testing': testing,
  'partner-s2s-sdk/redis': redis,
  'partner-s2s-sdk/postgres': postgres,
  'partner-s2s-sdk/stores': stores,
};

/** Sorted as a module namespace orders them, whatever the runner's own objects do. */
const namesOf = (entry: Record<string, unknown>) => Object.keys(entry).sort();

describe('the public surface', () => {
  it('lists every subpath package.json exports', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      name: string;
      exports: Record<string, unknown>;
    };
    // Files (the OpenAPI document, package.json) are data, not modules with names.
    const subpaths = Object.keys(pkg.exports)
      .filter((subpath) => !subpath.endsWith('.json'))
      .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`));
    expect(subpaths.sort()).toEqual(Object.keys(ENTRIES).sort());
  });

  it('partner-s2s-sdk', () => {
    expect(namesOf(main)).toMatchInlineSnapshot(`
      [
        "ACROSS_SPOKE_POOLS",
        "API_PREFIX",
        "AbortError",
        "ApiError",
        "ApiPromise",
        "ArgumentError",
        "AuthenticationError",
        "BRIDGE_SUMMARY_SCHEMA",
        "BadRequestError",
        "BatchVerificationError",
        "CALLBACK_KINDS",
        "CHAIN_NAMES",
        "CallbackBusyError",
        "CallbackListenerError",
        "CallbackParseError",
        "CallbackRouter",
        "CallbackTimeoutError",
        "ChainRpcError",
        "ConflictError",
        "ConnectionError",
        "DEFAULTS",
        "DEFAULT_DELEGATES",
        "DEFAULT_ENTRY_POINTS",
        "ENTRY_POINT_V07",
        "ENTRY_POINT_V08",
        "FINAL_STATES",
        "InsufficientBalanceError",
        "IntentNotFoundError",
        "InternalServerError",
        "InvalidClientError",
        "InvalidRequestError",
        "InvalidScopeError",
        "KNOWN_SCOPES",
        "MAV2_7702_DELEGATE_V100",
        "MAV2_7702_DELEGATE_V110",
        "MemoryCallbackStore",
        "MemoryTokenStore",
        "MemoryTrackerStore",
        "NotFoundError",
        "OAuthError",
        "OperationSupersededError",
        "Page",
        "PagePromise",
        "PartnerClient",
        "PartnerError",
        "PermissionDeniedError",
        "QuoteChangedError",
        "RateLimitError",
        "RequoteExhaustedError",
        "RequoteNonceError",
        "ResponseValidationError",
        "ServiceUnavailableError",
        "SigningError",
        "SigningTooSlowError",
        "SubmitOutcomeUnknownError",
        "TRANSFER_STATES",
        "TimeoutError",
        "TrackerError",
        "TransferTracker",
        "UnsupportedGrantTypeError",
        "UserNotFoundError",
        "VERSION",
        "ValidationFailedError",
        "WELL_KNOWN_TOKENS",
        "WalletNotLinkedError",
        "compareQuotes",
        "confirmUserOperation",
        "createCallbackRouter",
        "createTransferTracker",
        "describeBridgeBatch",
        "describeQuoteChange",
        "fromRawAmount",
        "isApiError",
        "isPartnerError",
        "openApiDocument",
        "parseBridgeCallback",
        "signBridgeBatch",
        "standardWebhooks",
        "toRawAmount",
        "verifyBridgeBatch",
      ]
    `);
  });

  it('partner-s2s-sdk/testing', () => {
    expect(namesOf(testing)).toMatchInlineSnapshot(`
      [
        "PartnerSimulator",
        "buildBridgeBundle",
        "callbackStoreConformance",
        "conformanceTransfer",
        "createPartnerSimulator",
        "encodeBatchCallData",
        "rehashBundle",
        "trackerStoreConformance",
      ]
    `);
  });

  it('partner-s2s-sdk/redis', () => {
    expect(namesOf(redis)).toMatchInlineSnapshot(`
      [
        "RedisStoreError",
        "createRedisCallbackStore",
        "createRedisTokenStore",
        "createRedisTrackerStore",
      ]
    `);
  });

  it('partner-s2s-sdk/stores', () => {
    expect(namesOf(stores)).toMatchInlineSnapshot(`
      [
        "compareClaim",
        "newTrackerRecord",
      ]
    `);
  });

  it('partner-s2s-sdk/postgres', () => {
    expect(namesOf(postgres)).toMatchInlineSnapshot(`
      [
        "PostgresStoreError",
        "createPostgresCallbackStore",
        "createPostgresTokenStore",
        "createPostgresTrackerStore",
        "migratePostgres",
      ]
    `);
  });

  it('types leave no value name: those of tracker.list are on the entry partners call it from, and on ./stores for store authors', () => {
    expectTypeOf<TransferTracker['list']>().parameter(0).toEqualTypeOf<TrackerListOptions | undefined>();
    expectTypeOf<Awaited<ReturnType<TransferTracker['list']>>['data']>().toEqualTypeOf<TrackerRecord[]>();
    expectTypeOf<StoredTrackerRecord>().toEqualTypeOf<TrackerRecord>();
    expectTypeOf<TrackerListRequest>().toHaveProperty('after');
  });
});
