import { encodeAbiParameters, encodeEventTopics, type Hex, pad, toHex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';

/** One user operation the mocked chain included. */
export interface MockInclusion {
  userOpHash: Hex;
  sender: Hex;
  nonce: bigint;
  block: bigint;
  success?: boolean;
  actualGasCost?: bigint;
  revertReason?: Hex;
  transactionHash?: Hex;
}

/** What the mocked chain holds: the sender's current nonce, its latest block, the operations included. */
export interface MockChainState {
  entryPoint: Hex;
  currentNonce: bigint;
  latest: bigint;
  included?: MockInclusion[];
}

export interface MockCall {
  method: string;
  params: unknown[];
}

/**
 * An EIP-1193 provider over a made-up chain: `eth_call` of `getNonce` answers `currentNonce`,
 * `eth_blockNumber` the latest block, `eth_getLogs` the EntryPoint's events in the asked range, built
 * with viem from the EntryPoint v0.7 ABI. `answer` may replace any answer (or throw) by method.
 */
export function mockChain(
  state: MockChainState,
  answer: (call: MockCall, count: number) => unknown = () => undefined,
) {
  const calls: MockCall[] = [];
  const provider = {
    async request({ method, params = [] }: { method: string; params?: unknown }) {
      const call = { method, params: params as unknown[] };
      calls.push(call);
      const replaced = await answer(call, calls.filter((c) => c.method === method).length);
      if (replaced !== undefined) return replaced;
      if (method === 'eth_call') return pad(toHex(state.currentNonce));
      if (method === 'eth_blockNumber') return toHex(state.latest);
      if (method === 'eth_getLogs') return logsOf(state, call.params[0] as LogFilter);
      throw Object.assign(new Error(`method ${method} not supported`), { code: -32601 });
    },
  };
  return { provider, calls, methods: () => calls.map((c) => c.method) };
}

interface LogFilter {
  address: string;
  topics: [string[], string];
  fromBlock: Hex;
  toBlock: Hex;
}

function logsOf(state: MockChainState, filter: LogFilter) {
  const from = BigInt(filter.fromBlock);
  const to = BigInt(filter.toBlock);
  return (state.included ?? [])
    .filter((op) => op.block >= from && op.block <= to && op.userOpHash === filter.topics[1])
    .flatMap((op) => operationLogs(state.entryPoint, op));
}

/** The logs `handleOps` leaves for one operation: its revert reason (when given), then its event. */
export function operationLogs(entryPoint: Hex, op: MockInclusion) {
  const transactionHash = op.transactionHash ?? pad(toHex(op.block), { size: 32 });
  const base = { address: entryPoint, blockNumber: toHex(op.block), transactionHash, removed: false };
  const logs = [];
  if (op.revertReason) {
    logs.push({
      ...base,
      topics: encodeEventTopics({
        abi: entryPoint07Abi,
        eventName: 'UserOperationRevertReason',
        args: { userOpHash: op.userOpHash, sender: op.sender },
      }),
      data: encodeAbiParameters([{ type: 'uint256' }, { type: 'bytes' }], [op.nonce, op.revertReason]),
    });
  }
  logs.push({
    ...base,
    topics: encodeEventTopics({
      abi: entryPoint07Abi,
      eventName: 'UserOperationEvent',
      args: { userOpHash: op.userOpHash, sender: op.sender, paymaster: `0x${'00'.repeat(19)}aa` },
    }),
    data: encodeAbiParameters(
      [{ type: 'uint256' }, { type: 'bool' }, { type: 'uint256' }, { type: 'uint256' }],
      [op.nonce, op.success ?? true, op.actualGasCost ?? 12_345n, 100_000n],
    ),
  });
  return logs;
}
