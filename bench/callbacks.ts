/**
 * Callbacks: parse + de-duplicate + dispatch throughput against a plain JSON.parse of the same
 * bodies, and memory after 1,000,000 callbacks over 100,000 transfers with the default store.
 */

import type { TransferStatus } from 'partner-s2s-sdk';
import { transfer } from '../fixtures/wire.js';
import { fixed, interleave, rateTable, table } from './lib.js';
import { sdk } from './sdk.js';

const PATH: TransferStatus[] = [
  'submitted',
  'source_confirmed',
  'source_confirmed',
  'delivered',
  'submitted',
];
// One body template; the transfer id and status change per callback, as they would on the wire.
const template = JSON.stringify(transfer({ transferId: '@ID@', status: '@STATUS@' as TransferStatus }));
const [head, middle, tail] = (() => {
  const [a, rest] = template.split('@ID@') as [string, string];
  const [b, c] = rest.split('@STATUS@') as [string, string];
  return [a, b, c];
})();
const body = (id: number, status: string) => `${head}t${id}${middle}${status}${tail}`;

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1_048_576;
}

export async function callbacks(): Promise<void> {
  const N = 20_000;
  let seq = 0;
  const router = sdk.createCallbackRouter({ authenticate: 'none' });
  let dispatched = 0;
  router.on('transfer', () => {
    dispatched++;
  });
  const result = await interleave(
    [
      {
        name: 'JSON.parse only',
        run: () => {
          for (let i = 0; i < N; i++) JSON.parse(body(seq++ % 100_000, PATH[i % PATH.length]!));
          return N;
        },
      },
      {
        name: 'parse + dedupe + dispatch',
        run: async () => {
          for (let i = 0; i < N; i++) await router.dispatch(body(seq++ % 100_000, PATH[i % PATH.length]!));
          return N;
        },
      },
    ],
    7,
  );
  rateTable(
    'Callbacks (median of 7 interleaved rounds)',
    { op: 'callback', perSecond: 'callbacks', baseline: 'JSON.parse only', label: 'JSON.parse', digits: 2 },
    result,
  );

  const fresh = sdk.createCallbackRouter({ authenticate: 'none' });
  fresh.on('transfer', () => {});
  const before = heapMb();
  const marks: string[][] = [];
  for (let i = 0; i < 1_000_000; i++) {
    const id = i % 100_000;
    await fresh.dispatch(body(id, PATH[Math.floor(i / 100_000) % PATH.length]!));
    if ((i + 1) % 250_000 === 0)
      marks.push([`after ${(i + 1).toLocaleString('en')}`, fixed(heapMb() - before, 1)]);
  }
  table(
    'Memory, default store, 1,000,000 callbacks over 100,000 transfers',
    ['callbacks', 'heap growth MB'],
    marks,
  );
  void dispatched;
}
