import { encodeFunctionData, erc20Abi, type Hex, hexToBigInt, serializeSignature, toHex } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount, sign } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  ArgumentError,
  type AuthorizationSignature,
  BatchVerificationError,
  type BridgeConstructResult,
  type BridgeRoute,
  PartnerClient,
  type SignedBridgeBatch,
  SigningError,
  signBridgeBatch,
  toRawAmount,
  type VerifiedBridgeBatch,
  verifyBridgeBatch,
} from '../../src/index.js';
import {
  createPartnerSimulator,
  encodeBatchCallData,
  type PartnerSimulator,
  rehashBundle,
} from '../../src/testing/index.js';
import { type ChainOutcome, type ChainWorld, chainOrSkip, startChainWorld } from '../helpers/chain.js';

/*
 * What the chain refuses, the SDK refuses. Each row changes an honest batch, verified and signed by
 * the SDK for a fresh wallet, the way a faulty signer, a lying service or a replay would. The same
 * row runs on the chain (the operation handed to the real EntryPoint v0.7, MAv2 7702 account and
 * SpokePool) and through the SDK against the simulator (verify, sign, send, the transfer's state);
 * where the SDK refuses before anything is sent, the simulator is asked too, with the raw submit.
 * They agree on every row: executes, refused, or included with its calls reverted (`failed`).
 */

const chain = await chainOrSkip();
const ROUTE = 'base-usdc-to-bsc-usdc';
const AMOUNT = '25';
const usdc = (amount: string) => toRawAmount(amount, 6);
/** The order of secp256k1, as SEC 2 states it. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const OTHER = '0x000000000000000000000000000000000000bEEF';

type Verdict = 'executes' | 'refused' | 'reverted';

/** An honest batch of a fresh wallet: built by the simulator, verified and signed by the SDK. */
interface Honest {
  userId: string;
  wallet: PrivateKeyAccount;
  construct: BridgeConstructResult;
  verified: VerifiedBridgeBatch;
  signed: SignedBridgeBatch;
}

/** What a row hands to the chain and to the SDK. */
interface Variant {
  construct: BridgeConstructResult;
  signature: Hex;
  authorization?: AuthorizationSignature;
}

interface Row {
  name: string;
  expected: Verdict;
  /** Why the chain refuses or reverts it. */
  chain?: RegExp;
  /** Why the SDK or the simulator refuses or fails it. */
  sdk?: RegExp;
  /** The wallet's USDC on the chain and, after construct, in the simulator. Default 100. */
  holds?: string;
  /** Runs before the variant is handed over (on both sides). */
  before?: (honest: Honest, sides: Sides) => Promise<void>;
  variant: (honest: Honest) => Variant | Promise<Variant>;
}

interface Sides {
  world: ChainWorld;
  sim: PartnerSimulator;
  client: PartnerClient;
  route: BridgeRoute;
}

/** `0xff00 ‖ r ‖ s ‖ v` split, and put back together with another prefix. */
const parts = (signature: Hex) => ({
  r: hexToBigInt(`0x${signature.slice(6, 70)}`),
  s: hexToBigInt(`0x${signature.slice(70, 134)}`),
  v: Number.parseInt(signature.slice(134), 16),
});
const word = (value: bigint) => value.toString(16).padStart(64, '0');
const packed = (prefix: string, { r, s, v }: { r: bigint; s: bigint; v: number }) =>
  `${prefix}${word(r)}${word(s)}${v.toString(16).padStart(2, '0')}` as Hex;

/** The honest batch with its calls or nonce changed, re-encoded and re-hashed as a forger would. */
function rebound(honest: Honest, change: (construct: BridgeConstructResult) => void): BridgeConstructResult {
  const construct = structuredClone(honest.construct);
  change(construct);
  construct.bundle.userOp.callData = encodeBatchCallData(construct.bundle.calls);
  construct.bundle = rehashBundle(construct.bundle);
  return construct;
}

const honestly = (h: Honest): Variant => ({ construct: h.construct, ...h.signed });

const ROWS: Row[] = [
  { name: 'as signed', expected: 'executes', variant: honestly },
  {
    name: 'high s',
    expected: 'refused',
    chain: /^AA24 signature error$/,
    sdk: /SigningError: .*s above n\/2/,
    variant: (h) => {
      const { r, s, v } = parts(h.signed.signature);
      return { ...honestly(h), signature: packed('0xff00', { r, s: N - s, v: v === 27 ? 28 : 27 }) };
    },
  },
  {
    name: 'v 0/1',
    expected: 'refused',
    chain: /^AA24 signature error$/,
    sdk: /SigningError: .*\bv\b/,
    variant: (h) => {
      const { r, s, v } = parts(h.signed.signature);
      return { ...honestly(h), signature: packed('0xff00', { r, s, v: v - 27 }) };
    },
  },
  {
    name: 'another prefix (0xff01, a contract owner)',
    expected: 'refused',
    chain: /^AA2[34]/,
    sdk: /SigningError|VALIDATION_FAILED/,
    variant: (h) => ({ ...honestly(h), signature: packed('0xff01', parts(h.signed.signature)) }),
  },
  {
    name: 'no prefix',
    expected: 'refused',
    chain: /^AA2[34]/,
    sdk: /SigningError|VALIDATION_FAILED/,
    variant: (h) => ({ ...honestly(h), signature: packed('0x', parts(h.signed.signature)) }),
  },
  {
    name: 'the raw hash (no EIP-191 prefix)',
    expected: 'refused',
    chain: /^AA24 signature error$/,
    sdk: /VALIDATION_FAILED.*does not recover/,
    variant: async (h) => {
      const raw = await sign({ hash: h.construct.bundle.userOpHash, privateKey: keyOf(h) });
      return { ...honestly(h), signature: `0xff00${serializeSignature(raw).slice(2)}` as Hex };
    },
  },
  {
    name: 'a call changed (the fee to another address) and re-bound',
    expected: 'refused',
    chain: /^AA24 signature error$/,
    sdk: /BatchVerificationError: .*fee\.recipient/,
    variant: (h) => ({
      ...honestly(h),
      construct: rebound(h, (c) => {
        c.bundle.calls[2]!.data = encodeFunctionData({
          abi: erc20Abi,
          functionName: 'transfer',
          args: [OTHER, h.verified.gasFee.amountRaw],
        });
      }),
    }),
  },
  {
    name: 'a replay of a submitted intent',
    expected: 'refused',
    chain: /^AA25 invalid account nonce$/,
    sdk: /not sent again.*INTENT_NOT_FOUND: .*already submitted/,
    before: async (h, { world, client }) => {
      await client.bridge.send({ userId: h.userId, intentId: h.construct.intentId, ...h.signed });
      expect(await world.submit(h.construct.bundle, h.signed)).toMatchObject({
        status: 'included',
        success: true,
      });
    },
    variant: honestly,
  },
  {
    name: 'a broken authorization (signed for another nonce)',
    expected: 'refused',
    chain: /the sender has no code/,
    sdk: /VALIDATION_FAILED.*authorization does not recover/,
    variant: async (h) => {
      const wanted = h.construct.bundle.authorization!;
      const other = await h.wallet.signAuthorization({ ...wanted, nonce: wanted.nonce + 1 });
      return { ...honestly(h), authorization: { r: other.r, s: other.s, yParity: other.yParity as 0 | 1 } };
    },
  },
  {
    name: 'a high-s authorization',
    expected: 'refused',
    chain: /the sender has no code/,
    sdk: /SigningError: .*authorization/,
    variant: (h) => {
      const { r, s, yParity } = h.signed.authorization!;
      const flipped = { r, s: toHex(N - hexToBigInt(s), { size: 32 }), yParity: (1 - yParity) as 0 | 1 };
      return { ...honestly(h), authorization: flipped };
    },
  },
  {
    name: 'a wrong nonce key (0), signed anyway',
    expected: 'refused',
    chain: /^AA23 reverted$/,
    sdk: /BatchVerificationError: .*userOp\.nonceKey/,
    variant: async (h) => {
      const sequence = BigInt(h.construct.bundle.userOp.nonce as string) & ((1n << 64n) - 1n);
      const construct = rebound(h, (c) => (c.bundle.userOp.nonce = toHex(sequence)));
      const signed = await signBridgeBatch({ unverifiedBundle: construct.bundle, signer: h.wallet });
      return { construct, ...signed };
    },
  },
  {
    name: 'an underfunded wallet',
    expected: 'reverted',
    holds: '10',
    chain: /^InsufficientBalance\(0x[0-9a-fA-F]{40}, 10000000, 25000000\)$/,
    sdk: /the calls reverted: the wallet cannot pay 25\.12 USDC/,
    variant: honestly,
  },
];

/** The private key of the row's wallet (the simulator made it). */
const keys = new WeakMap<PrivateKeyAccount, Hex>();
const keyOf = (h: Honest) => keys.get(h.wallet)!;

describe.runIf(chain.ready)(
  'signature variants: the chain and the SDK with the simulator agree',
  { timeout: 60_000 },
  () => {
    let sides: Sides;

    beforeAll(async () => {
      if (!chain.ready) return;
      const world = await startChainWorld(chain.packages);
      const sim = createPartnerSimulator();
      const client = new PartnerClient({
        baseUrl: sim.baseUrl,
        ...sim.demo.credentials,
        fetch: sim.fetch,
        maxRetries: 0,
      });
      const route = (await client.bridge.routes()).find((r) => r.routeId === ROUTE)!;
      sides = { world, sim, client, route };
    });

    afterAll(async () => {
      sides?.sim.close();
      await sides?.world.stop();
    });

    it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_, row) => {
      const honest = await honestBatch(sides, row);
      await row.before?.(honest, sides);
      const variant = await row.variant(honest);
      const onChain = verdictOf(await sides.world.submit(variant.construct.bundle, variant));
      const { sdk, simulator } = await throughTheSdk(sides, honest, variant);
      expect(
        { chain: onChain.verdict, sdk: sdk.verdict, simulator: (simulator ?? sdk).verdict },
        `chain: ${onChain.why}; sdk: ${sdk.why}; simulator: ${simulator?.why}`,
      ).toEqual({
        chain: row.expected,
        sdk: row.expected,
        simulator: row.expected,
      });
      if (row.chain) expect(onChain.why).toMatch(row.chain);
      if (row.sdk) expect(`${sdk.why} | ${simulator?.why ?? ''}`).toMatch(row.sdk);
      if (row.expected === 'reverted') {
        // Included: the nonce is spent and the delegation applied, on the chain and in the simulator.
        const { world } = sides;
        expect(await world.nonceOf(honest.wallet.address, 1n)).toBe(
          BigInt(honest.construct.bundle.userOp.nonce as string) + 1n,
        );
        expect(await world.client.getCode({ address: honest.wallet.address })).toMatch(/^0xef0100/);
        const next = await sides.client.bridge.construct({
          userId: honest.userId,
          routeId: ROUTE,
          amount: '1',
        });
        expect(next.bundle.authorization).toBeNull();
        expect(BigInt(next.bundle.userOp.nonce as string)).toBe(
          BigInt(honest.construct.bundle.userOp.nonce as string) + 1n,
        );
      }
    });
  },
);

/** A fresh user and wallet holding `row.holds` USDC on both sides, and its honest batch. */
async function honestBatch({ world, sim, client, route }: Sides, row: Row): Promise<Honest> {
  const user = sim.createUser({ organisationId: sim.demo.organisationId });
  const wallet = privateKeyToAccount(user.wallet!.privateKey);
  keys.set(wallet, user.wallet!.privateKey);
  const holds = usdc(row.holds ?? '100');
  // The service builds only what the wallet can pay when it builds it.
  sim.fund(user.userId, route.from.chainId, route.from.contractAddress, usdc('100'));
  await world.mint(wallet.address, holds);
  const construct = await client.bridge.construct({ userId: user.userId, routeId: ROUTE, amount: AMOUNT });
  sim.fund(user.userId, route.from.chainId, route.from.contractAddress, holds);
  const verified = verifyBridgeBatch({ route, construct, wallet: wallet.address, amount: AMOUNT });
  const signed = await signBridgeBatch({ verified, signer: wallet });
  return { userId: user.userId, wallet, construct, verified, signed };
}

function verdictOf(outcome: ChainOutcome): { verdict: Verdict; why: string } {
  if (outcome.status === 'refused') return { verdict: 'refused', why: outcome.reason };
  return outcome.success
    ? { verdict: 'executes', why: '' }
    : { verdict: 'reverted', why: outcome.revertError ?? '' };
}

type Seen = { verdict: Verdict; why: string };

/**
 * The variant through the SDK: verified (what the SDK would sign), then sent with `bridge.send`,
 * then the transfer's state. Where the SDK refuses a signature before sending (or sends nothing, as
 * for an intent it knows was taken), the simulator's own verdict comes from the raw submit. A batch
 * the verifier refuses has no such second answer: the simulator holds the batch it built, not the
 * one a lying service would hand out.
 */
async function throughTheSdk(
  { client, route, sim }: Sides,
  honest: Honest,
  variant: Variant,
): Promise<{ sdk: Seen; simulator?: Seen }> {
  const body = {
    userId: honest.userId,
    intentId: variant.construct.intentId,
    signature: variant.signature,
    ...(variant.authorization ? { authorization: variant.authorization } : {}),
  };
  const submits = () =>
    sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/batch/send')).length;
  const served = async (send: () => Promise<unknown>): Promise<Seen> => {
    try {
      await send();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { verdict: 'refused', why: `${error.code}: ${error.message}` };
    }
    const transfer = sim.transfer(variant.construct.transferId);
    if (transfer.status === 'submitted') return { verdict: 'executes', why: '' };
    const why = transfer.failureReason ?? '';
    return { verdict: why.startsWith('the calls reverted') ? 'reverted' : 'refused', why };
  };
  const raw = () => served(() => client.post('/bridge/transaction/batch/send', { body }));
  try {
    verifyBridgeBatch({ route, construct: variant.construct, wallet: honest.wallet.address, amount: AMOUNT });
  } catch (error) {
    if (!(error instanceof BatchVerificationError)) throw error;
    return {
      sdk: { verdict: 'refused', why: `BatchVerificationError: ${error.issues.map((i) => i.check)}` },
    };
  }
  const before = submits();
  let sdk: Seen;
  try {
    sdk = await served(() => client.bridge.send(body));
  } catch (error) {
    if (!(error instanceof SigningError || error instanceof ArgumentError)) throw error;
    return { sdk: { verdict: 'refused', why: `${error.name}: ${error.message}` }, simulator: await raw() };
  }
  if (submits() > before) return { sdk, simulator: sdk };
  const simulator = await raw();
  return { sdk: { verdict: 'refused', why: `not sent again: ${simulator.why}` }, simulator };
}
