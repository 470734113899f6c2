import type { BridgeTransfer } from '../schemas/bridge.js';
import { stateRank } from '../schemas/states.js';
import { newTrackerRecord } from '../tracker/record.js';
import type { TrackerRecord } from '../tracker/store.js';

// The records and transfers the tracker store conformance suites write.

/**
 * A transfer as the service sends it, in `status`: a fixture for a store's own tests.
 *
 * @example
 * await store.observe(id, conformanceTransfer(id, 'usr_1', 'delivered'), 4);
 */
export function conformanceTransfer(transferId: string, userId: string, status: string): BridgeTransfer {
  const side = {
    chain: 'base',
    chainId: 8453,
    token: 'USDC',
    tokenAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as const,
    decimals: 6,
    amount: '25',
    amountRaw: '25000000',
  };
  return {
    transferId,
    userId,
    routeId: 'base-usdc-to-bsc-usdc',
    status,
    provider: 'across',
    providerRef: '1000001',
    source: side,
    destination: { ...side, chain: 'bsc', chainId: 56 },
    providerFee: '0.01',
    providerFeeRaw: '10000',
    gasFee: '0.1',
    gasFeeRaw: '100000',
    gasFeeToken: 'USDC',
    srcTxHash: `0x${'ab'.repeat(32)}`,
    dstTxHash: null,
    refundTxHash: null,
    failureReason: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** A record the tracker could write after reading `status` and dispatching it. */
export function advanced(record: TrackerRecord, status: string, final = false): TrackerRecord {
  const rank = stateRank(status) ?? 0;
  return {
    ...record,
    observed: conformanceTransfer(record.transferId, record.userId, status),
    observedRank: rank,
    dispatched: status,
    dispatchedRank: rank,
    final,
    phase: final ? record.phase : status,
    phaseSince: 1_700_000_000_000,
    overdue: ['sourceConfirmation'],
    intervalMs: 5_000,
    failures: 0,
    reads: record.reads + 1,
    updatedAt: Date.now(),
  };
}

let counter = 0;
export function fresh(source: TrackerRecord['source'] = 'track', user = 'usr_conformance'): TrackerRecord {
  counter++;
  const transferId = `brt_conf_${Date.now().toString(36)}_${counter}_${Math.random().toString(36).slice(2, 6)}`;
  return newTrackerRecord({ transferId, userId: user, source, now: Date.now() });
}
