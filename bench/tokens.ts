/**
 * Tokens: 1,000 concurrent calls on a cold client make exactly one token request; a simulated
 * three-hour run with expires_in 3600 makes 3 or 4, with no call waiting on a refresh after the first.
 */

import type { TokenEvent } from 'partner-s2s-sdk';
import { route } from '../fixtures/wire.js';
import { table } from './lib.js';
import { sdk } from './sdk.js';

function service() {
  let tokenRequests = 0;
  const routes = JSON.stringify({ data: [route()] });
  const fetch = async (input: Request | URL | string) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith('/auth/token')) {
      tokenRequests++;
      return new Response(
        JSON.stringify({
          access_token: `t${tokenRequests}`,
          token_type: 'Bearer',
          expires_in: 3600,
          scope: 'bridge:read',
        }),
      );
    }
    return new Response(routes, { headers: { 'content-type': 'application/json' } });
  };
  return { fetch, count: () => tokenRequests };
}

export async function tokens(): Promise<void> {
  const cold = service();
  const client = new sdk.PartnerClient({
    baseUrl: 'https://bench.test',
    clientId: 'c',
    clientSecret: 's',
    fetch: cold.fetch,
  });
  await Promise.all(Array.from({ length: 1000 }, () => client.bridge.routes()));

  // Three hours of a call every 10 seconds, on a clock the benchmark moves.
  const realNow = Date.now;
  let now = realNow();
  Date.now = () => now;
  const long = service();
  const events: TokenEvent[] = [];
  try {
    const steady = new sdk.PartnerClient({
      baseUrl: 'https://bench.test',
      clientId: 'c',
      clientSecret: 's',
      fetch: long.fetch,
    });
    steady.on('token', (event) => events.push(event));
    for (let second = 0; second <= 3 * 3600; second += 10) {
      now += 10_000;
      await steady.bridge.routes();
    }
  } finally {
    Date.now = realNow;
  }
  const waited = events.filter((event) => event.action === 'fetched').length;
  table(
    'Tokens',
    ['scenario', 'token requests', 'calls that waited for a token'],
    [
      ['1,000 concurrent calls, cold client', cold.count(), 1000],
      ['3 h, a call every 10 s, expires_in 3600', long.count(), waited],
    ],
  );
}
