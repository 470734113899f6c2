import { hashMessage, recoverAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { verifyAuthorization } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { ArgumentError, type BridgeSigner, SigningError, signBridgeBatch } from '../src/index.js';
import { validConstruct } from './helpers/batches.js';

const account = privateKeyToAccount(generatePrivateKey());

describe('signBridgeBatch', () => {
  it('signs the user operation as 0xff00 ‖ EIP-191 over the raw hash, and the 7702 authorization', async () => {
    const { bundle } = validConstruct();
    const signed = await signBridgeBatch({ bundle, signer: account });
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
      bundle: validConstruct({ authorizationNonce: null }).bundle,
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
    const signed = await signBridgeBatch({ bundle: validConstruct().bundle, signer: kms });
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
    await expect(signBridgeBatch({ bundle: validConstruct().bundle, signer: liar })).rejects.toBeInstanceOf(
      SigningError,
    );
  });

  it('refuses an authorization signed for another delegate', async () => {
    const sneaky: BridgeSigner = {
      address: account.address,
      signMessage: account.signMessage,
      signAuthorization: (request) =>
        account.signAuthorization({ ...request, address: '0x77021100bD87b7008E5E1989d0eB38555d0d0000' }),
    };
    await expect(signBridgeBatch({ bundle: validConstruct().bundle, signer: sneaky })).rejects.toBeInstanceOf(
      SigningError,
    );
  });

  it('wraps a failing signer', async () => {
    const broken: BridgeSigner = {
      address: account.address,
      signMessage: async () => {
        throw new Error('HSM offline');
      },
    };
    const error = await signBridgeBatch({
      bundle: validConstruct({ authorizationNonce: null }).bundle,
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
      signBridgeBatch({ bundle: validConstruct().bundle, signer: watcher }),
    ).rejects.toBeInstanceOf(ArgumentError);
    await expect(
      signBridgeBatch({ bundle: { userOpHash: '0x12', authorization: null }, signer: watcher }),
    ).rejects.toBeInstanceOf(ArgumentError);
    expect(signedAnything).toBe(false);
  });
});
