import { type Hex, hashMessage } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BridgeSigner,
  PartnerClient,
  SigningError,
  signBridgeBatch,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { validConstruct } from '../helpers/batches.js';
import { makeClient, mockService } from '../helpers/mock-fetch.js';

/*
 * The account's validation (OpenZeppelin ECDSA.tryRecover) refuses s > n/2 and v other than 27 or
 * 28, and the chain skips an EIP-7702 tuple with s > n/2. A KMS (AWS KMS among them) may return
 * either form: signing puts them in the one form the chain takes, submitting refuses the rest.
 */

// The order of secp256k1 as SEC 2 states it, written out so the test does not lean on the code under test.
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const ROUTE = 'base-usdc-to-bsc-usdc';
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

const word = (value: bigint) => value.toString(16).padStart(64, '0');
const big = (value: string) => BigInt(value);

interface Parts {
  r: bigint;
  s: bigint;
  yParity: number;
}

/** The canonical (low-s) signature viem makes over the EIP-191 hash of `raw`. */
async function canonicalParts(key: Hex, raw: Hex): Promise<Parts> {
  const signed = await sign({ hash: hashMessage({ raw }), privateKey: key });
  return { r: big(signed.r), s: big(signed.s), yParity: signed.yParity! };
}

/** The same signature with s → n − s and the parity flipped: it recovers to the same key. */
const highS = ({ r, s, yParity }: Parts): Parts => ({ r, s: N - s, yParity: 1 - yParity });

/** 65 bytes r ‖ s ‖ v, with v as the chain wants it (27/28) or as a raw parity (0/1). */
function rsv({ r, s, yParity }: Parts, v: 'eth' | 'parity' | number = 'eth'): Hex {
  const last = v === 'eth' ? 27 + yParity : v === 'parity' ? yParity : v;
  return `0x${word(r)}${word(s)}${last.toString(16).padStart(2, '0')}`;
}

/** What sign must return: `0xff00` ‖ r ‖ low s ‖ 27 + parity. */
const submitted = (parts: Parts) => `0xff00${rsv(parts).slice(2)}`;

type AuthorizationForm = (parts: Parts) => Record<string, unknown>;

/**
 * A KMS-like signer for `key` whose user-operation signatures are `userOp` of viem's canonical one
 * and whose authorizations are `authorization` of viem's canonical one.
 */
function kmsSigner(
  key: Hex,
  userOp: (parts: Parts) => string,
  authorization: AuthorizationForm = ({ r, s, yParity }) => ({
    r: `0x${word(r)}`,
    s: `0x${word(s)}`,
    yParity,
  }),
): BridgeSigner {
  const account = privateKeyToAccount(key);
  return {
    address: account.address,
    signMessage: async ({ message }) => userOp(await canonicalParts(key, message.raw)),
    signAuthorization: async (request) => {
      const signed = await account.signAuthorization(request);
      return authorization({ r: big(signed.r), s: big(signed.s), yParity: signed.yParity! }) as never;
    },
  };
}

/** viem's own canonical signature of the authorization `bundle` asks for, by `key`. */
async function canonicalAuthorization(key: Hex, bundle: ReturnType<typeof validConstruct>['bundle']) {
  const signed = await privateKeyToAccount(key).signAuthorization(bundle.authorization!);
  return { r: signed.r, s: signed.s, yParity: signed.yParity };
}

const asAuthorization = ({ r, s, yParity }: Parts) => ({ r: `0x${word(r)}`, s: `0x${word(s)}`, yParity });

describe('signBridgeBatch: only signatures the chain accepts', () => {
  it('puts a high-s or v = 0/1 user-operation signature and a high-s authorization in canonical form', async () => {
    const key = generatePrivateKey();
    const { bundle } = validConstruct();
    const expected = submitted(await canonicalParts(key, bundle.userOpHash));
    const expectedAuthorization = await canonicalAuthorization(key, bundle);
    const forms: [string, (p: Parts) => string, AuthorizationForm][] = [
      ['high s', (p) => rsv(highS(p)), (p) => asAuthorization(highS(p))],
      [
        'v as 0/1',
        (p) => rsv(p, 'parity'),
        (p) => ({ r: `0x${word(p.r)}`, s: `0x${word(p.s)}`, v: 27n + BigInt(p.yParity) }),
      ],
      [
        'high s and v as 0/1',
        (p) => rsv(highS(p), 'parity'),
        (p) => {
          const flipped = highS(p);
          // Only `v`, as the parity: a KMS adapter may not name it yParity.
          return { r: `0x${word(flipped.r)}`, s: `0x${word(flipped.s)}`, v: BigInt(flipped.yParity) };
        },
      ],
      // An odd-length, unpadded s, as some adapters hand it over.
      [
        'high s unpadded',
        (p) => rsv(highS(p)),
        (p) => ({ ...asAuthorization(highS(p)), s: `0x${(N - p.s).toString(16)}` }),
      ],
    ];
    for (const [name, userOp, authorization] of forms) {
      const signed = await signBridgeBatch({
        unverifiedBundle: bundle,
        signer: kmsSigner(key, userOp, authorization),
      });
      expect(signed.signature, name).toBe(expected);
      expect(signed.authorization, name).toEqual(expectedAuthorization);
      expect(big(`0x${signed.signature.slice(70, 134)}`) <= N / 2n, name).toBe(true);
      expect(big(signed.authorization!.s) <= N / 2n, name).toBe(true);
    }
  });

  it('refuses what no normalising makes valid with SigningError', async () => {
    const key = generatePrivateKey();
    const { bundle } = validConstruct();
    const userOps: [string, (p: Parts) => string][] = [
      ['r = 0', (p) => rsv({ ...p, r: 0n })],
      ['s = 0', (p) => rsv({ ...p, s: 0n })],
      ['r = n', (p) => rsv({ ...p, r: N })],
      ['s = n', (p) => rsv({ ...p, s: N })],
      ['s = 2^256 - 1', (p) => rsv({ ...p, s: 2n ** 256n - 1n })],
      ['v = 2', (p) => rsv(p, 2)],
      ['v = 26', (p) => rsv(p, 26)],
      ['v = 29', (p) => rsv(p, 29)],
      ['v = 37 (EIP-155)', (p) => rsv(p, 37)],
      ['64 bytes', (p) => rsv(p).slice(0, -2)],
      ['66 bytes', (p) => `${rsv(p)}00`],
      ['not hex', (p) => `${rsv(p).slice(0, -2)}zz`],
    ];
    for (const [name, userOp] of userOps) {
      const error = await signBridgeBatch({
        unverifiedBundle: { ...bundle, authorization: null },
        signer: kmsSigner(key, userOp),
      }).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(SigningError);
    }
    const authorizations: [string, AuthorizationForm][] = [
      ['yParity 2', (p) => ({ ...asAuthorization(p), yParity: 2 })],
      ['yParity -1', (p) => ({ ...asAuthorization(p), yParity: -1 })],
      ['v 29', (p) => ({ r: `0x${word(p.r)}`, s: `0x${word(p.s)}`, v: 29n })],
      ['yParity and v disagree', (p) => ({ ...asAuthorization(p), v: 28n - BigInt(p.yParity) })],
      ['no parity', (p) => ({ r: `0x${word(p.r)}`, s: `0x${word(p.s)}` })],
      ['r = 0', (p) => asAuthorization({ ...p, r: 0n })],
      ['s = 0', (p) => asAuthorization({ ...p, s: 0n })],
      ['r = n', (p) => asAuthorization({ ...p, r: N })],
      ['s = n', (p) => asAuthorization({ ...p, s: N })],
      ['s longer than 32 bytes', (p) => ({ ...asAuthorization(p), s: `0x01${word(p.s)}` })],
    ];
    for (const [name, authorization] of authorizations) {
      const error = await signBridgeBatch({
        unverifiedBundle: bundle,
        signer: kmsSigner(key, (p) => rsv(p), authorization),
      }).catch((e: unknown) => e);
      expect(error, `authorization ${name}`).toBeInstanceOf(SigningError);
    }
  });

  it('still refuses a high-s signature by another key: normalising never skips the recovery check', async () => {
    const { bundle } = validConstruct();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const other = kmsSigner(
      generatePrivateKey(),
      (p) => rsv(highS(p)),
      (p) => asAuthorization(highS(p)),
    );
    await expect(
      signBridgeBatch({ unverifiedBundle: bundle, signer: { ...other, address: wallet.address } }),
    ).rejects.toBeInstanceOf(SigningError);
    const mixed = kmsSigner(
      generatePrivateKey(),
      (p) => rsv(highS(p)),
      (p) => asAuthorization(highS(p)),
    );
    const own = kmsSigner(generatePrivateKey(), (p) => rsv(p));
    // The user operation signed by the wallet, the authorization by someone else.
    await expect(
      signBridgeBatch({
        unverifiedBundle: bundle,
        signer: {
          address: own.address,
          signMessage: own.signMessage,
          signAuthorization: mixed.signAuthorization!,
        },
      }),
    ).rejects.toBeInstanceOf(SigningError);
  });
});

let sim: PartnerSimulator | undefined;
let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  sim?.close();
  sim = undefined;
});

function clientFor(s: PartnerSimulator) {
  return new PartnerClient({ baseUrl: s.baseUrl, ...s.demo.credentials, fetch: s.fetch, strict: true });
}

describe('the normalised signature end to end', () => {
  it('execute with a KMS returning high-s and v = 0/1 signatures: the transfer is delivered', async () => {
    sim = createPartnerSimulator({ autoAdvance: { sourceConfirmedMs: 5, deliveredMs: 5 } });
    const client = clientFor(sim);
    const userId = sim.demo.userId;
    const signer = kmsSigner(
      sim.demo.wallet.privateKey,
      (p) => rsv(highS(p), 'parity'),
      (p) => asAuthorization(highS(p)),
    );
    const signedSteps: { signature: string; authorization?: { s: string } }[] = [];
    const { transferId } = await client.bridge.execute({
      userId,
      routeId: ROUTE,
      amount: '5',
      signer,
      onProgress: (progress) => {
        if (progress.step === 'signed') signedSteps.push(progress.signed);
      },
    });
    expect(signedSteps[0]!.authorization).toBeDefined();
    expect(big(signedSteps[0]!.authorization!.s) <= N / 2n).toBe(true);
    expect(['1b', '1c']).toContain(signedSteps[0]!.signature.slice(-2));
    const final = await client.bridge.transfers.wait({ userId, transferId }, { pollIntervalMs: 5 });
    expect(final.status).toBe('delivered');
    // The authorization was taken: the next batch asks for none.
    const next = await client.bridge.construct({ userId, routeId: ROUTE, amount: '1' });
    expect(next.bundle.authorization).toBeNull();
  });
});

describe('bridge.send refuses a signature the chain would refuse, before sending anything', () => {
  it('a hand-made high-s or v = 0/1 signature or high-s authorization: SigningError, no request', async () => {
    const key = generatePrivateKey();
    const parts = await canonicalParts(key, `0x${'ab'.repeat(32)}`);
    const good = submitted(parts);
    const goodAuthorization = asAuthorization(parts);
    const cases: [string, { signature: string; authorization?: object }][] = [
      ['high s', { signature: `0xff00${rsv(highS(parts)).slice(2)}` }],
      ['v = 0/1', { signature: `0xff00${rsv(parts, 'parity').slice(2)}` }],
      ['r = 0', { signature: `0xff00${rsv({ ...parts, r: 0n }).slice(2)}` }],
      ['s = n', { signature: `0xff00${rsv({ ...parts, s: N }).slice(2)}` }],
      ['authorization high s', { signature: good, authorization: asAuthorization(highS(parts)) }],
      [
        'authorization s = 0',
        { signature: good, authorization: { ...goodAuthorization, s: `0x${word(0n)}` } },
      ],
      [
        'authorization r = n',
        { signature: good, authorization: { ...goodAuthorization, r: `0x${word(N)}` } },
      ],
    ];
    const service = mockService({
      routes: { 'POST /bridge/transaction/batch/send': () => new Response('{}') },
    });
    const client = makeClient(service);
    for (const [name, signed] of cases) {
      const error = await client.bridge
        .send({ userId: 'u', intentId: 'int_1', ...signed } as never)
        .catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(SigningError);
      expect((error as Error).message, name).toMatch(/signature|authorization/);
    }
    expect(service.calls).toEqual([]);
  });

  it('against the simulator: the intent is not spent, and the canonical signature then goes through', async () => {
    sim = createPartnerSimulator();
    const client = clientFor(sim);
    const userId = sim.demo.userId;
    const built = await client.bridge.construct({ userId, routeId: ROUTE, amount: '5' });
    const account = privateKeyToAccount(sim.demo.wallet.privateKey);
    const verified = verifyBridgeBatch({
      route: (await client.bridge.routes()).find((route) => route.routeId === ROUTE)!,
      construct: built,
      wallet: account.address,
      amount: '5',
    });
    const signed = await signBridgeBatch({ verified, signer: account });
    const parts = await canonicalParts(sim.demo.wallet.privateKey, built.bundle.userOpHash);
    const highSignature = `0xff00${rsv(highS(parts)).slice(2)}` as Hex;
    await expect(
      client.bridge.send({ userId, intentId: built.intentId, ...signed, signature: highSignature }),
    ).rejects.toBeInstanceOf(SigningError);
    const highAuthorization = {
      ...signed.authorization!,
      s: `0x${word(N - big(signed.authorization!.s))}` as Hex,
      yParity: 1 - signed.authorization!.yParity,
    };
    await expect(
      client.bridge.send({
        userId,
        intentId: built.intentId,
        ...signed,
        authorization: highAuthorization as never,
      }),
    ).rejects.toBeInstanceOf(SigningError);
    expect(sim.transfer(built.transferId).status).toBe('pending');
    const sent = await client.bridge.send({ userId, intentId: built.intentId, ...signed });
    expect(sent.transferId).toBe(built.transferId);
    expect(sim.transfer(built.transferId).status).toBe('submitted');
  });
});

describe('the simulator treats a non-canonical signature as the chain does', () => {
  /** The simulator over HTTP on 127.0.0.1, driven by plain fetch as a partner in another language would. */
  async function rawPartner(s: PartnerSimulator) {
    server = await s.listen(0, '127.0.0.1');
    const api = `${server.url}/api/v1/s2s`;
    const tokenAnswer = await fetch(`${api}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: s.demo.credentials.clientId,
        client_secret: s.demo.credentials.clientSecret,
      }).toString(),
    });
    const { access_token } = (await tokenAnswer.json()) as { access_token: string };
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const construct = async () =>
      (
        await call('POST', '/bridge/construct/transaction/batch', {
          userId: s.demo.userId,
          routeId: ROUTE,
          amount: 5,
        })
      ).body.data;
    return { call, construct };
  }

  it('takes the submit, and the transfer ends failed with a failureReason naming the signature', async () => {
    const bodies: { status: string; failureReason: string | null }[] = [];
    sim = createPartnerSimulator({
      autoAdvance: { sourceConfirmedMs: 5, deliveredMs: 5 },
      callbacks: (body) => void bodies.push(body),
    });
    const key = sim.demo.wallet.privateKey;
    const userId = sim.demo.userId;
    const { call, construct } = await rawPartner(sim);
    const before = sim.balance(userId, 8453, USDC_BASE);
    const forms: [string, (p: Parts) => Hex, RegExp][] = [
      ['high s', (p) => rsv(highS(p)), /signature.*\bs\b/],
      ['v = 0/1', (p) => rsv(p, 'parity'), /signature.*\bv\b/],
    ];
    for (const [name, form, reason] of forms) {
      const built = await construct();
      const parts = await canonicalParts(key, built.bundle.userOpHash);
      const authorization = await privateKeyToAccount(key).signAuthorization(built.bundle.authorization);
      const answer = await call('POST', '/bridge/transaction/batch/send', {
        userId,
        intentId: built.intentId,
        signature: `0xff00${form(parts).slice(2)}`,
        authorization: { r: authorization.r, s: authorization.s, yParity: authorization.yParity },
      });
      expect(answer.status, name).toBe(200);
      expect(answer.body.data.transferId, name).toBe(built.transferId);
      const transfer = (await call('GET', `/bridge/transfers/${built.transferId}?userId=${userId}`)).body
        .data;
      expect(transfer.status, name).toBe('failed');
      expect(transfer.failureReason, name).toMatch(reason);
      expect(bodies.filter((body) => body.status === 'failed').at(-1)?.failureReason).toBe(
        transfer.failureReason,
      );
      // The intent is spent, as on the chain: a second submit is answered as spent.
      const again = await call('POST', '/bridge/transaction/batch/send', {
        userId,
        intentId: built.intentId,
        signature: submitted(parts),
        authorization: { r: authorization.r, s: authorization.s, yParity: authorization.yParity },
      });
      expect(again.body.code, name).toBe('INTENT_NOT_FOUND');
    }
    // Nothing moved, and the wallet was never delegated: the next batch asks for an authorization.
    expect(sim.balance(userId, 8453, USDC_BASE)).toBe(before);
    expect((await construct()).bundle.authorization).not.toBeNull();
  });

  it('a high-s authorization is skipped by the chain: the transfer fails naming the authorization', async () => {
    sim = createPartnerSimulator({ autoAdvance: { sourceConfirmedMs: 5, deliveredMs: 5 } });
    const key = sim.demo.wallet.privateKey;
    const userId = sim.demo.userId;
    const { call, construct } = await rawPartner(sim);
    const built = await construct();
    const parts = await canonicalParts(key, built.bundle.userOpHash);
    const signed = await privateKeyToAccount(key).signAuthorization(built.bundle.authorization);
    const high = highS({ r: big(signed.r), s: big(signed.s), yParity: signed.yParity! });
    const answer = await call('POST', '/bridge/transaction/batch/send', {
      userId,
      intentId: built.intentId,
      signature: submitted(parts),
      authorization: asAuthorization(high),
    });
    expect(answer.status).toBe(200);
    const transfer = (await call('GET', `/bridge/transfers/${built.transferId}?userId=${userId}`)).body.data;
    expect(transfer.status).toBe('failed');
    expect(transfer.failureReason).toMatch(/authorization/);
    // The tuple was skipped: the same authorization nonce is asked for again.
    const next = await construct();
    expect(next.bundle.authorization.nonce).toBe(built.bundle.authorization.nonce);
  });

  it('a signature that recovers to no wallet is still a 400, and nothing is spent', async () => {
    sim = createPartnerSimulator();
    const { call, construct } = await rawPartner(sim);
    const built = await construct();
    const stranger = await canonicalParts(generatePrivateKey(), built.bundle.userOpHash);
    const answer = await call('POST', '/bridge/transaction/batch/send', {
      userId: sim.demo.userId,
      intentId: built.intentId,
      signature: `0xff00${rsv(highS(stranger)).slice(2)}`,
    });
    expect(answer.status).toBe(400);
    expect(sim.transfer(built.transferId).status).toBe('pending');
  });
});
