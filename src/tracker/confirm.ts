import type { RequestOptions } from '../core/request-options.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { UserOperationConfirmation } from '../schemas/chain.js';
import type { TrackerClient } from './options.js';
import type { TrackerRecord } from './store.js';

/**
 * What the chain says of an overdue transfer's operation, for its `overdue` event: only for a
 * transfer held in `submitted` whose operation the record knows, through a client that can ask
 * (`bridge.confirmOnChain`, with the chain in its `chains`). Bounded by one read attempt's time of
 * the step, no retries, so that the step still fits in its lease; a failure is reported through
 * `fail` and the event goes without it.
 */
export async function chainWord(
  client: TrackerClient,
  record: TrackerRecord,
  read: RequestOptions,
  fail: (error: unknown) => void,
): Promise<UserOperationConfirmation | undefined> {
  const operation = record.operation;
  const confirm = client.bridge.confirmOnChain;
  if (!operation || typeof confirm !== 'function' || record.observed?.status !== 'submitted')
    return undefined;
  const timeoutMs = read.timeoutMs ?? 5_000;
  const bound = AbortSignal.timeout(timeoutMs);
  const signal = read.signal ? AbortSignal.any([read.signal, bound]) : bound;
  const { chainId, entryPoint, userOpHash, sender, nonce } = operation;
  try {
    return await confirm.call(
      client.bridge,
      {
        bundle: {
          chainId,
          entryPoint: entryPoint as `0x${string}`,
          userOpHash: userOpHash as `0x${string}`,
          userOp: { sender, nonce },
        },
      },
      { signal, timeoutMs, maxRetries: 0 },
    );
  } catch (error) {
    // No RPC for the chain in the client's `chains`: nothing to ask, nothing wrong.
    if (!(error instanceof ArgumentError)) fail(error);
    return undefined;
  }
}
