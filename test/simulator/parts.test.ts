import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../src/index.js';
import { SimAdmin } from '../../src/testing/simulator/admin.js';
import { createCore } from '../../src/testing/simulator/core.js';
import { HttpFailure, jsonResponse } from '../../src/testing/simulator/envelope.js';
import { listenOn, simulatorFetch } from '../../src/testing/simulator/http.js';

/**
 * The simulator's parts without the facade: what a stand-alone server with an admin API (issue 15)
 * would assemble. The facade's behaviour is covered by simulator.test.ts and e2e.test.ts.
 */

describe('the simulator, part by part', () => {
  it('serves each mount under its own prefix, and answers an HttpFailure with the error envelope', async () => {
    const fetch = simulatorFetch([
      { prefix: '/api/v1/s2s', handle: (request) => jsonResponse({ api: 'partner', path: request.path }) },
      {
        prefix: '/_admin',
        handle: (request) => {
          if (request.method !== 'POST') throw new HttpFailure(405, 'METHOD_NOT_ALLOWED', 'use POST');
          return jsonResponse({ api: 'admin', body: JSON.parse(request.body) as unknown });
        },
      },
    ]);
    expect(await (await fetch('http://sim/api/v1/s2s/me')).json()).toEqual({ api: 'partner', path: '/me' });
    const admin = await fetch('http://sim/_admin/users', { method: 'POST', body: '{"a":1}' });
    expect(await admin.json()).toEqual({ api: 'admin', body: { a: 1 } });
    const wrong = await fetch('http://sim/_admin/users');
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toMatchObject({
      statusCode: 405,
      code: 'METHOD_NOT_ALLOWED',
      message: 'use POST',
    });
    expect((await fetch('http://sim/elsewhere')).status).toBe(404);

    const server = await listenOn(fetch, 0);
    try {
      const over = await globalThis.fetch(`${server.url}/_admin/users`, { method: 'POST', body: '{"b":2}' });
      expect(await over.json()).toEqual({ api: 'admin', body: { b: 2 } });
    } finally {
      await server.close();
    }
  });

  it('runs admin operations on checked arguments, ids resolved, with the methods’ errors', () => {
    const core = createCore({});
    const admin = new SimAdmin(core);
    const org = admin.run('createOrganisation', { params: { scopes: ['bridge:read'] } });
    const { userId } = admin.run('createUser', { params: { organisationId: org, wallet: false } });
    admin.run('fund', { userId, chainId: 8453, token: `0x${'ab'.repeat(20)}`, raw: 5n });
    expect(core.users.users.get(userId)?.balances.get(`8453:0x${'ab'.repeat(20)}`)).toBe(5n);
    expect(() => admin.run('createUser', { params: { organisationId: 'org_nope' } })).toThrow(ArgumentError);
    expect(() => admin.run('fund', { userId, chainId: -1, token: 'x', raw: 1n })).toThrow(
      /PartnerSimulator\.fund/,
    );
  });
});
