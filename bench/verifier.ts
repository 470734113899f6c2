/**
 * Verifier throughput on one core: verifyBridgeBatch with every check, next to a plain viem decode
 * of the same three calls (what a verifier does at the very least).
 */
import { decodeFunctionData, erc20Abi, parseAbi } from 'viem';
import { NOW, USER, validConstruct } from '../fixtures/batches.js';
import { route } from '../fixtures/wire.js';
import { interleave, rateTable } from './lib.js';
import { sdk } from './sdk.js';

const depositAbi = parseAbi([
  'function deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message)',
]);

export async function verifier(): Promise<void> {
  const construct = validConstruct();
  const r = route();
  const [approve, deposit, fee] = construct.bundle.calls;
  const N = 5_000;
  const result = await interleave(
    [
      {
        name: 'viem decode of the 3 calls',
        run: () => {
          for (let i = 0; i < N; i++) {
            decodeFunctionData({ abi: erc20Abi, data: approve!.data });
            decodeFunctionData({ abi: depositAbi, data: deposit!.data });
            decodeFunctionData({ abi: erc20Abi, data: fee!.data });
          }
          return N;
        },
      },
      {
        name: 'verifyBridgeBatch (every check)',
        run: async () => {
          for (let i = 0; i < N; i++)
            await sdk.verifyBridgeBatch({ route: r, construct, wallet: USER, amount: '25.5', now: NOW });
          return N;
        },
      },
    ],
    7,
  );
  rateTable(
    'Verifier, one core (median of 7 interleaved rounds)',
    {
      op: 'batch',
      perSecond: 'batches',
      baseline: 'viem decode of the 3 calls',
      label: 'viem decode',
      digits: 1,
    },
    result,
  );
}
