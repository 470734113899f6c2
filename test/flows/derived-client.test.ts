import { privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  PartnerClient,
  type SignedBridgeBatch,
  SubmitOutcomeUnknownError,
  signBridgeBatch,
  verifyBridgeBatch,
} from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

const SUBMIT = '/bridge/transaction/batch/send';

afterEach(() => {
  vi.useRealTimers();
});

const gatewayPage = () =>
  new Response('<html><body>502 Bad Gateway</body></html>', {
    status: 502,
    headers: { 'content-type': 'text/html' },
  });

/**
 * The simulator behind a gateway that can lose the next submit's answer: `after` forwards the submit
 * (the service takes it) and answers 502; `before` answers 502 without forwarding it.
 */
function lossyService() {
  const sim = createPartnerSimulator();
  const faults: { next: 'after' | 'before' | undefined } = { next: undefined };
  const fetch = async (input: Request | URL | string, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const fault = url.endsWith(SUBMIT) ? faults.next : undefined;
    if (fault) faults.next = undefined;
    if (fault === 'before') return gatewayPage();
    const response = await sim.fetch(input, init);
    return fault === 'after' ? gatewayPage() : response;
  };
  const client = new PartnerClient({
    baseUrl: sim.baseUrl,
    ...sim.demo.credentials,
    fetch,
    retry: { minDelayMs: 1, maxDelayMs: 5 },
  });
  return { sim, faults, client };
}

/** Submits the simulator received, answered or not. */
const submits = (sim: PartnerSimulator) =>
  sim.requests.filter((request) => request.method === 'POST' && request.path === SUBMIT).length;

/** Builds an intent with `builder` and signs it as the partner would, outside `execute`. */
async function buildAndSign(sim: PartnerSimulator, builder: PartnerClient) {
  const account = privateKeyToAccount(sim.demo.wallet.privateKey);
  const [route] = await builder.bridge.routes();
  const userId = sim.demo.userId;
  const built = await builder.bridge.construct({ userId, routeId: route!.routeId, amount: '25' });
  const verified = verifyBridgeBatch({
    route: route!,
    construct: built,
    wallet: account.address,
    amount: '25',
  });
  const signed: SignedBridgeBatch = await signBridgeBatch({ verified, signer: account });
  return { built, send: { userId, intentId: built.intentId, ...signed } };
}

describe('a client and the clients derived from it share the intents they built and submitted', () => {
  it('a submit through a derived client whose answer is lost resolves the parent-built intent; every re-send returns it', async () => {
    const { sim, faults, client } = lossyService();
    const patient = client.withOptions({ timeoutMs: 120_000 });
    const { built, send } = await buildAndSign(sim, client);
    faults.next = 'after';
    const first = await patient.bridge.send(send);
    expect(first).toEqual({ transferId: built.transferId, userOpHash: built.bundle.userOpHash });
    const again = [
      await client.bridge.send(send),
      await patient.bridge.send(send),
      await patient.withOptions({ maxRetries: 0 }).bridge.send(send),
    ];
    for (const result of again) expect(result).toEqual(first);
    // What it returns came from an answer, which `.withResponse()` shows.
    const { data, response } = await client.bridge.send(send).withResponse();
    expect(data).toEqual(first);
    expect(response.status).toBe(200);
    expect(submits(sim)).toBe(1);
  });

  it('an intent built by a derived client is known to its parent and its siblings', async () => {
    const { sim, faults, client } = lossyService();
    const builder = client.withOptions({ defaultHeaders: { 'x-job': 'build' } });
    const sibling = client.withOptions({ maxRetries: 5 });
    const { built, send } = await buildAndSign(sim, builder);
    faults.next = 'after';
    const first = await sibling.bridge.send(send);
    expect(first.transferId).toBe(built.transferId);
    expect(await client.bridge.send(send)).toEqual(first);
    expect(await builder.bridge.send(send)).toEqual(first);
    expect(submits(sim)).toBe(1);
  });

  it('execute through the parent with the answer lost, then a re-send through a derived client: one submit', async () => {
    const { sim, faults, client } = lossyService();
    faults.next = 'after';
    const account = privateKeyToAccount(sim.demo.wallet.privateKey);
    const [route] = await client.bridge.routes();
    let signed: SignedBridgeBatch | undefined;
    let intentId = '';
    const result = await client.bridge.execute({
      userId: sim.demo.userId,
      routeId: route!.routeId,
      amount: '25',
      signer: account,
      onProgress: (progress) => {
        if (progress.step === 'constructed') intentId = progress.construct.intentId;
        if (progress.step === 'signed') signed = progress.signed;
      },
    });
    const again = await client
      .withOptions({ timeoutMs: 120_000 })
      .bridge.send({ userId: sim.demo.userId, intentId, ...signed! });
    expect(again).toEqual({ transferId: result.transferId, userOpHash: result.userOpHash });
    expect(submits(sim)).toBe(1);
  });

  it('a derived client names the transfer of an unclear submit of a parent-built intent, and the re-send from the parent goes through once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { sim, faults, client } = lossyService();
    const { built, send } = await buildAndSign(sim, client);
    faults.next = 'before';
    const outcome = client
      .withOptions({ timeoutMs: 120_000 })
      .bridge.send(send)
      .catch((e: unknown) => e);
    for (let i = 0; i < 10; i++) await vi.advanceTimersByTimeAsync(1_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(SubmitOutcomeUnknownError);
    expect(error).toMatchObject({ intentId: built.intentId, transferId: built.transferId });
    vi.useRealTimers();
    // The service never took it: the re-send the error points to is the first submit it takes.
    const result = await client.bridge.send(send);
    expect(result.transferId).toBe(built.transferId);
    expect(sim.transfer(built.transferId).status).toBe('submitted');
  });
});
