import { hashMessage, recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { verifyAuthorization } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { route } from '../../fixtures/wire.js';
import {
  ArgumentError,
  BatchVerificationError,
  type BridgeSigner,
  SigningError,
  signBridgeBatch,
  verifyBridgeBatch,
} from '../../src/index.js';
import { rehashBundle } from '../../src/testing/index.js';
import { ATTACKER, batchFor, NOW, USER, validConstruct } from '../helpers/batches.js';

const account = privateKeyToAccount(generatePrivateKey());

describe('signBridgeBatch', () => {
  it('signs the user operation as 0xff00 ‖ EIP-191 over the raw hash, and the 7702 authorization', async () => {
    const { bundle } = validConstruct();
    const signed = await signBridgeBatch({ unverifiedBundle: bundle, signer: account });
    expect(signed.signature).toMatch(/^0xff00[0-9a-f]{130}$/);
    const inner = `0x${signed.signature.slice(6)}` as const;
    expect(await recoverAddress({ hash: hashMessage({ raw: bundle.userOpHash }), signature: inner })).toBe(
      account.address,
    );
    expect(signed.authorization).toBeDefined();
    const { r, s, yParity } = signed.authorization!;
    expect(
      await verifyAuthorization({
        address: account.address,
        authorization: { ...bundle.authorization!, r, s, yParity },
      }),
    ).toBe(true);
  });

  it('leaves authorization out when the wallet is already delegated', async () => {
    const signed = await signBridgeBatch({
      unverifiedBundle: validConstruct({ authorizationNonce: null }).bundle,
      signer: account,
    });
    expect(Object.keys(signed)).toEqual(['signature']);
  });

  it('works with a KMS-style signer that is not a viem account', async () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const kms: BridgeSigner = {
      address,
      async signMessage({ message }) {
        const signature = await sign({ hash: hashMessage(message), privateKey: key, to: 'hex' });
        return signature;
      },
      async signAuthorization(request) {
        return privateKeyToAccount(key).signAuthorization(request);
      },
    };
    const signed = await signBridgeBatch({ unverifiedBundle: validConstruct().bundle, signer: kms });
    expect(signed.signature).toHaveLength(2 + 67 * 2);
    expect(signed.authorization?.yParity).toBeOneOf([0, 1]);
  });

  it('refuses a signature that does not recover to the signer', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const liar: BridgeSigner = {
      ...account,
      address: other.address,
      signMessage: account.signMessage,
      signAuthorization: account.signAuthorization,
    };
    await expect(
      signBridgeBatch({ unverifiedBundle: validConstruct().bundle, signer: liar }),
    ).rejects.toBeInstanceOf(SigningError);
  });

  it('refuses an authorization signed for another delegate', async () => {
    const sneaky: BridgeSigner = {
      address: account.address,
      signMessage: account.signMessage,
      signAuthorization: (request) =>
        account.signAuthorization({ ...request, address: '0x77021100bD87b7008E5E1989d0eB38555d0d0000' }),
    };
    await expect(
      signBridgeBatch({ unverifiedBundle: validConstruct().bundle, signer: sneaky }),
    ).rejects.toBeInstanceOf(SigningError);
  });

  it('wraps a failing signer', async () => {
    const broken: BridgeSigner = {
      address: account.address,
      signMessage: async () => {
        throw new Error('HSM offline');
      },
    };
    const error = await signBridgeBatch({
      unverifiedBundle: validConstruct({ authorizationNonce: null }).bundle,
      signer: broken,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SigningError);
    expect((error as SigningError).cause).toEqual(new Error('HSM offline'));
  });

  it('rejects bad arguments before signing anything', async () => {
    let signedAnything = false;
    const watcher: BridgeSigner = {
      address: account.address,
      signMessage: async (args) => {
        signedAnything = true;
        return account.signMessage(args);
      },
    };
    // An authorization is asked for but the signer cannot sign one.
    await expect(
      signBridgeBatch({ unverifiedBundle: validConstruct().bundle, signer: watcher }),
    ).rejects.toBeInstanceOf(ArgumentError);
    await expect(
      signBridgeBatch({ unverifiedBundle: { userOpHash: '0x12', authorization: null }, signer: watcher }),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(signedAnything).toBe(false);
  });
});

/** A signer for the fixture wallet that records whether it was asked to sign anything. */
function watchedSigner() {
  const key = generatePrivateKey();
  const inner = privateKeyToAccount(key);
  const state = { signed: 0 };
  const signer: BridgeSigner = {
    address: USER,
    // The fixture wallet is not this key's address: only what signBridgeBatch asks to sign matters here.
    signMessage: async (args) => {
      state.signed++;
      return inner.signMessage(args);
    },
    signAuthorization: async (args) => {
      state.signed++;
      return inner.signAuthorization(args);
    },
  };
  return { signer, state, account: inner };
}

describe('signBridgeBatch signs only what was verified', () => {
  const verify = (construct = validConstruct()) =>
    verifyBridgeBatch({ route: route(), construct, wallet: USER, amount: '25.5', now: NOW });

  it('signs the verified batch: its userOpHash and its authorization', async () => {
    const own = privateKeyToAccount(generatePrivateKey());
    const construct = batchFor(route(), {}, { wallet: own.address });
    const verified = verifyBridgeBatch({ route: route(), construct, wallet: own.address, now: NOW });
    const signed = await signBridgeBatch({ verified, signer: own });
    const inner = `0x${signed.signature.slice(6)}` as const;
    expect(await recoverAddress({ hash: hashMessage({ raw: verified.userOpHash }), signature: inner })).toBe(
      own.address,
    );
    const { r, s, yParity } = signed.authorization!;
    expect(
      await verifyAuthorization({
        address: own.address,
        authorization: { ...construct.bundle.authorization!, r, s, yParity },
      }),
    ).toBe(true);
    // With the bundle given beside it, unchanged, it signs the same.
    expect((await signBridgeBatch({ verified, bundle: construct.bundle, signer: own })).signature).toBe(
      signed.signature,
    );
  });

  it('refuses a signer other than the wallet verified', async () => {
    const verified = verify();
    const { signer, state } = watchedSigner();
    await expect(
      signBridgeBatch({ verified, signer: { ...signer, address: ATTACKER } }),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(state.signed).toBe(0);
  });

  it('refuses a bundle changed after verification, before signing anything', async () => {
    const changes: ((c: ReturnType<typeof validConstruct>) => void)[] = [
      (c) => (c.bundle.userOpHash = `0x${'12'.repeat(32)}`),
      (c) => (c.bundle.calls[0]!.target = ATTACKER),
      (c) => (c.bundle.authorization!.nonce = 4),
      (c) => (c.bundle.userOp.maxFeePerGas = '0xffffffffff'),
      // Re-hashed too: a consistent new bundle is still not the one verified.
      (c) => {
        c.bundle.userOp.preVerificationGas = '0x1';
        Object.assign(c.bundle, rehashBundle(c.bundle));
      },
    ];
    for (const change of changes) {
      const construct = validConstruct();
      const verified = verify(construct);
      change(construct);
      const { signer, state } = watchedSigner();
      const error = await signBridgeBatch({ verified, signer }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BatchVerificationError);
      expect((error as BatchVerificationError).issues[0]!.check).toBe('bundle.changed');
      expect(state.signed).toBe(0);
    }
  });

  it("reads the construct's bundle once: the bundle kept for signing is the one verified", () => {
    const construct = validConstruct();
    let reads = 0;
    const tricky = {
      ...construct,
      get bundle() {
        reads++;
        return reads === 1 ? construct.bundle : validConstruct({ authorizationNonce: 9 }).bundle;
      },
    };
    const verified = verify(tricky as typeof construct);
    expect(reads).toBe(1);
    expect(verified.authorization?.nonce).toBe(3);
  });

  it('refuses a bundle given beside the verified batch that is not the one verified', async () => {
    const verified = verify();
    const { signer, state } = watchedSigner();
    const other = validConstruct({ authorizationNonce: 9 }).bundle;
    await expect(signBridgeBatch({ verified, bundle: other, signer })).rejects.toBeInstanceOf(
      BatchVerificationError,
    );
    expect(state.signed).toBe(0);
  });

  it('the digest is of the content: the same bundle with its keys in another order is the same', async () => {
    const construct = validConstruct();
    const verified = verify(construct);
    const reordered = Object.fromEntries(Object.entries(structuredClone(construct.bundle)).reverse());
    reordered.userOp = Object.fromEntries(Object.entries(construct.bundle.userOp).reverse());
    const again = verify({ ...construct, bundle: reordered as typeof construct.bundle });
    expect(again.digest).toBe(verified.digest);
    expect(verify(validConstruct({ authorizationNonce: 4 })).digest).not.toBe(verified.digest);
    const { signer } = watchedSigner();
    // Past the digest check, the signer's own key fails recovery: the bundle was accepted.
    await expect(signBridgeBatch({ verified, bundle: reordered as never, signer })).rejects.toBeInstanceOf(
      SigningError,
    );
  });

  it('refuses a raw bundle, a look-alike of a verified batch, and both forms at once', async () => {
    const construct = validConstruct();
    const verified = verify(construct);
    const { signer, state } = watchedSigner();
    for (const params of [
      { bundle: construct.bundle, signer },
      { verified: { ...verified }, signer },
      { verified: structuredClone(verified), signer },
      { verified, unverifiedBundle: construct.bundle, signer },
    ]) {
      await expect(signBridgeBatch(params as never)).rejects.toBeInstanceOf(ArgumentError);
    }
    expect(state.signed).toBe(0);
  });

  it('the verified batch is frozen', () => {
    const verified = verify();
    expect(Object.isFrozen(verified)).toBe(true);
    expect(Object.isFrozen(verified.authorization)).toBe(true);
    expect(() => {
      (verified as { userOpHash: string }).userOpHash = `0x${'12'.repeat(32)}`;
    }).toThrow(TypeError);
  });

  it('never signs an EIP-7702 authorization for chain id 0 (valid on every chain)', async () => {
    const { signer, state } = watchedSigner();
    const bundle = { ...validConstruct().bundle, authorization: { chainId: 0, address: USER, nonce: 0 } };
    await expect(signBridgeBatch({ unverifiedBundle: bundle, signer })).rejects.toBeInstanceOf(ArgumentError);
    expect(state.signed).toBe(0);
  });
});
