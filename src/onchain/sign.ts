import { readArgs } from '../core/args.js';
import { BatchVerificationError, SigningError } from '../errors/bridge-errors.js';
import { ArgumentError } from '../errors/client-errors.js';
import type { AuthorizationSignature, BridgeBundle } from '../schemas/bridge.js';
import { ADDRESS_PATTERN, type Address, HASH32_PATTERN, type Hex } from '../schemas/common.js';
import { canonicalAuthorization, canonicalUserOpSignature } from './canonical.js';
import type { BridgeBatchView } from './describe/types.js';
import { sameAddress } from './hex.js';
import { bundleText, sameBundle, textDigest, verifiedRecord } from './verified.js';
import type { VerifiedBridgeBatch } from './verify/verify.js';
import { loadViem, loadViemUtils } from './viem.js';

/**
 * An ECDSA signature as a signer hands it back, in viem's shape: `r` and `s` as hex, and the
 * parity as `yParity` (0 or 1) or as `v` (27 or 28). Written out here rather than taken from viem,
 * so that the SDK's declarations compile without viem's (which need the DOM lib).
 */
interface SignatureParts {
  r: Hex | string;
  s: Hex | string;
  yParity?: number | undefined;
  v?: bigint | number | undefined;
}

/**
 * What `bridge.execute` passes a signer as a second argument; a viem account ignores it.
 * `signal` fires at the quote's expiry less `signing.submitMarginMs` (or when the call ends): a
 * signature after it is discarded, so an adapter (KMS, MPC, an approval queue) may stop there.
 * `summary` describes the verified batch being signed, for an approver or a policy to check.
 */
export interface SignerCallContext {
  signal: AbortSignal;
  /** `describeBridgeBatch` of the batch: its lines, its locale-free form, and the digests it binds. */
  summary: BridgeBatchView;
}

/**
 * What signs a bridge batch: a viem `LocalAccount` fits as it is (one from `privateKeyToAccount`,
 * or from `toAccount` around a KMS), and so does any adapter (KMS, HSM, MPC) with the same two
 * methods. The types are the SDK's own, so a project that never imports viem needs none of its
 * declarations.
 *
 * @example
 * import { privateKeyToAccount } from 'viem/accounts';
 * const signer: BridgeSigner = privateKeyToAccount(process.env.USER_KEY as `0x${string}`);
 */
export interface BridgeSigner {
  /** The wallet address: the batch's sender, depositor and recipient. */
  address: Address | string;
  /**
   * EIP-191 personal signature; called with `{ message: { raw: userOpHash } }`. Returns 65 bytes
   * `r ‖ s ‖ v`; a high s or a `v` of 0/1 (as a KMS may return) is put in the form the chain takes.
   */
  signMessage(args: { message: { raw: Hex } }, context?: SignerCallContext): Promise<Hex | string>;
  /**
   * Signs an EIP-7702 authorization; needed only when the wallet is not yet delegated on the source
   * chain. May be left out or `undefined`, as on a viem `LocalAccount` made by `toAccount`.
   */
  signAuthorization?:
    | ((
        args: { address: Address; chainId: number; nonce: number },
        context?: SignerCallContext,
      ) => Promise<SignatureParts>)
    | undefined;
}

/**
 * What `signBridgeBatch` takes: the batch `verifyBridgeBatch` returned, or, only by its explicit
 * name, a bundle nobody verified.
 */
export type SignBridgeBatchParams =
  | {
      /** What `verifyBridgeBatch` returned: only the operation and authorization it checked are signed. */
      verified: VerifiedBridgeBatch;
      /**
       * The bundle about to be submitted, when the caller holds it apart: refused unless it is, to
       * the byte, the bundle that was verified.
       */
      bundle?: BridgeBundle | undefined;
      signer: BridgeSigner;
      unverifiedBundle?: undefined;
    }
  | {
      /**
       * The opt-out: signs a bundle that `verifyBridgeBatch` never checked, for a partner that
       * verifies some other way. Whatever the service put in it is signed.
       */
      unverifiedBundle: Pick<BridgeBundle, 'userOpHash' | 'authorization'>;
      signer: BridgeSigner;
      verified?: undefined;
      bundle?: undefined;
    };

/** What `bridge.send` takes besides `userId` and `intentId`. */
export interface SignedBridgeBatch {
  /** `0xff00` ‖ the 65-byte EIP-191 signature over the 32 bytes of `userOpHash`. */
  signature: Hex;
  /** The EIP-7702 authorization signature, present only when the bundle asked for one. */
  authorization?: AuthorizationSignature;
}

/**
 * Signs a verified bridge batch: the user operation (MAv2 `0xff00` ‖ EIP-191 signature over the
 * raw 32-byte hash) and, when the wallet is not yet delegated, the EIP-7702 authorization. Both
 * are returned in the one form the chain accepts (s ≤ n/2, the user operation's v 27 or 28: a
 * high-s or v = 0/1 answer of a KMS is rewritten to it, anything else is a `SigningError`), and
 * recovered and checked against `signer.address` in that form before they are returned.
 *
 * It signs what `verifyBridgeBatch` returned, and refuses it when the bundle verified has changed
 * since (a `BatchVerificationError` with check `bundle.changed`). A bundle nobody verified is
 * signed only when passed by the opt-out's name, `unverifiedBundle`.
 *
 * @example
 * const verified = verifyBridgeBatch({ route, construct: built, wallet: account.address, amount: '25.5' });
 * const signed = await signBridgeBatch({ verified, signer: account });
 * await client.bridge.send({ userId, intentId: built.intentId, ...signed });
 */
export async function signBridgeBatch(params: SignBridgeBatchParams): Promise<SignedBridgeBatch> {
  const input = readInput(params);
  checkBinding(input);
  const request = checkSignable(input);
  const result: SignedBridgeBatch = { signature: await signOperation(request) };
  if (request.authorization) result.authorization = await signAuthorization(request, request.authorization);
  return result;
}

type AuthorizationRequest = { address: Address; chainId: number; nonce: number };

type SignInput = ReturnType<typeof readInput>;

/** What is signed, checked: the hash, the signer's methods as read, and the authorization, if any. */
interface SignRequest {
  hash: Hex;
  /** The signer object itself: its methods are called on it, as read once. */
  signer: BridgeSigner;
  address: string;
  signMessage: BridgeSigner['signMessage'];
  signAuthorization: BridgeSigner['signAuthorization'];
  authorization: AuthorizationRequest | null;
}

/** Read input: once, so that what is signed and what it is checked against cannot change midway. */
function readInput(params: SignBridgeBatchParams) {
  return readArgs('signBridgeBatch', () => {
    const verified: unknown = params?.verified;
    const unverified = params?.unverifiedBundle;
    const record = verifiedRecord(verified);
    const signer = params?.signer;
    const authorization = record ? record.authorization : (unverified?.authorization ?? null);
    return {
      verified,
      record,
      unverified,
      bundle: params?.bundle,
      hash: record ? record.userOpHash : unverified?.userOpHash,
      address: signer?.address,
      signMessage: signer?.signMessage,
      signAuthorization: signer?.signAuthorization,
      authorization:
        authorization === null
          ? null
          : { address: authorization.address, chainId: authorization.chainId, nonce: authorization.nonce },
      signer,
    };
  });
}

/**
 * The binding: a verified batch (or a bundle by the opt-out's name), signed by the wallet it was
 * verified for, whose bundle has not changed since.
 */
function checkBinding(input: SignInput): void {
  if (input.verified !== undefined && input.unverified !== undefined) {
    throw new ArgumentError({
      where: 'signBridgeBatch',
      issues: [{ path: 'unverifiedBundle', message: 'give either verified or unverifiedBundle, not both' }],
    });
  }
  if (input.unverified === undefined && !input.record) {
    throw new ArgumentError({
      where: 'signBridgeBatch',
      issues: [
        input.verified === undefined
          ? {
              path: 'verified',
              message:
                'is required: pass what verifyBridgeBatch returned (to sign a bundle nobody verified, pass it as unverifiedBundle)',
            }
          : { path: 'verified', message: 'is not a batch returned by verifyBridgeBatch' },
      ],
    });
  }
  if (!input.record) return;
  const { text, original, wallet } = input.record;
  if (typeof input.address === 'string' && !sameAddress(input.address, wallet)) {
    throw new ArgumentError({
      where: 'signBridgeBatch',
      issues: [
        { path: 'signer.address', message: `is not the wallet the batch was verified for (${wallet})` },
      ],
    });
  }
  const changed: [string, unknown][] = [['the bundle verified', original]];
  if (input.bundle !== undefined) changed.push(['the bundle given', input.bundle]);
  for (const [name, bundle] of changed) {
    const now = bundleText(bundle);
    if (now === undefined || !sameBundle(now, text)) {
      throw new BatchVerificationError({
        issues: [
          {
            check: 'bundle.changed',
            message: `${name} is not the bundle verifyBridgeBatch checked: it changed since`,
            expected: textDigest(text),
            actual: now === undefined ? 'unreadable' : textDigest(now),
          },
        ],
      });
    }
  }
}

/** The hash, the signer and the authorization: each of a shape that can be signed, every problem at once. */
function checkSignable(input: SignInput): SignRequest {
  const problems: { path: string; message: string }[] = [];
  if (typeof input.hash !== 'string' || !HASH32_PATTERN.test(input.hash)) {
    problems.push({ path: 'unverifiedBundle.userOpHash', message: 'must be a 32-byte hex hash' });
  }
  if (typeof input.address !== 'string' || !ADDRESS_PATTERN.test(input.address)) {
    problems.push({ path: 'signer.address', message: 'must be a 20-byte hex address' });
  }
  if (typeof input.signMessage !== 'function')
    problems.push({ path: 'signer.signMessage', message: 'must be a function' });
  const authorization = input.authorization;
  if (authorization) {
    if (typeof authorization.address !== 'string' || !ADDRESS_PATTERN.test(authorization.address))
      problems.push({ path: 'authorization.address', message: 'must be a 20-byte hex address' });
    for (const field of ['chainId', 'nonce'] as const) {
      const value = authorization[field];
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
        problems.push({ path: `authorization.${field}`, message: 'must be a non-negative integer' });
    }
    // An EIP-7702 authorization for chain 0 is valid on every chain: never sign one.
    if (authorization.chainId === 0)
      problems.push({ path: 'authorization.chainId', message: 'must not be 0 (valid on every chain)' });
    if (typeof input.signAuthorization !== 'function') {
      problems.push({
        path: 'signer.signAuthorization',
        message: 'is needed: the wallet is not yet delegated on the source chain',
      });
    }
  }
  if (problems.length > 0) throw new ArgumentError({ where: 'signBridgeBatch', issues: problems });
  return {
    hash: input.hash as Hex,
    signer: input.signer as BridgeSigner,
    address: input.address as string,
    signMessage: input.signMessage as BridgeSigner['signMessage'],
    signAuthorization: input.signAuthorization,
    authorization,
  };
}

/**
 * The user operation: MAv2 `0xff00` ‖ the EIP-191 signature over the raw hash, in the form the
 * chain takes, recovered to the signer's address in that form.
 */
async function signOperation(request: SignRequest): Promise<Hex> {
  const { hash, signer } = request;
  const viem = await loadViem();
  let raw: string;
  try {
    raw = await request.signMessage.call(signer, { message: { raw: hash } });
  } catch (error) {
    throw new SigningError({ message: 'The signer failed to sign the user operation', cause: error });
  }
  // What is checked and returned is the signature in the form the chain takes, never the raw answer.
  const userOpSignature = canonicalUserOpSignature(raw);
  const recovered = await viem
    .recoverMessageAddress({ message: { raw: hash }, signature: userOpSignature })
    .catch(() => undefined);
  if (!sameAddress(recovered, request.address)) {
    throw new SigningError({
      message: 'The user-operation signature does not recover to the signer address',
    });
  }
  return `0xff00${userOpSignature.slice(2)}`;
}

/** The EIP-7702 authorization, in the form the chain takes, recovered to the signer's address. */
async function signAuthorization(
  request: SignRequest,
  authorization: AuthorizationRequest,
): Promise<AuthorizationSignature> {
  let signed: SignatureParts;
  try {
    signed = await (request.signAuthorization as NonNullable<BridgeSigner['signAuthorization']>).call(
      request.signer,
      {
        address: authorization.address,
        chainId: authorization.chainId,
        nonce: authorization.nonce,
      },
    );
  } catch (error) {
    throw new SigningError({
      message: 'The signer failed to sign the EIP-7702 authorization',
      cause: error,
    });
  }
  const signature = canonicalAuthorization(signed);
  const utils = await loadViemUtils();
  const signedBy = await utils
    .recoverAuthorizationAddress({
      authorization: {
        address: authorization.address,
        chainId: authorization.chainId,
        nonce: authorization.nonce,
      },
      signature,
    })
    .catch(() => undefined);
  if (!sameAddress(signedBy, request.address)) {
    throw new SigningError({
      message: 'The authorization signature does not recover to the signer address',
    });
  }
  return signature;
}
