import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { route, transfer } from '../../fixtures/wire.js';
import { freshConstruct } from './batches.js';
import { json, type MockRequest, mockService } from './mock-fetch.js';

/** The wallet the fake service builds its batches for. */
export const account = privateKeyToAccount(generatePrivateKey());

/** A fake bridge service whose construct is a valid batch for `account`; `overrides` replace routes. */
export function bridgeService(
  overrides: Record<string, (request: MockRequest) => Response | Promise<Response>> = {},
  construct = freshConstruct(account.address),
) {
  return mockService({
    routes: {
      'GET /bridge/routes': () => json({ data: [route(), route({ routeId: 'reverse' })] }),
      'POST /bridge/construct/transaction/batch': () => json({ data: construct }),
      'POST /bridge/transaction/batch/send': () =>
        json({ data: { userOpHash: construct.bundle.userOpHash, transferId: 'tr_1' } }),
      'GET /bridge/transfers/tr_1': () => json({ data: transfer({ status: 'submitted' }) }),
      ...overrides,
    },
  });
}
