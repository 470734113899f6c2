import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * A process that used the SDK ends by itself once its work is over, whatever failed: no timer,
 * socket or request of the SDK keeps it alive. Each test runs a fresh Node on the sources (tsx),
 * which is why these are not in the fault and auth files (`npm run test:quick` runs no child process).
 */
describe('nothing is left behind', () => {
  it('a process whose only call failed against a token endpoint that never answers exits at once', () => {
    const script = `
      import { createServer } from 'node:http';
      import { PartnerClient } from './src/index.ts';
      const server = createServer((req) => { req.resume(); });
      // The service lives in another process: its side of each connection must not hold this one
      // (undici opens a fresh idle connection after an abort, which the server here would keep).
      server.on('connection', (socket) => socket.unref());
      server.listen(0, '127.0.0.1', async () => {
        server.unref();
        const client = new PartnerClient({ baseUrl: 'http://127.0.0.1:' + server.address().port, clientId: 'c', clientSecret: 's' });
        const error = await client.me({ timeoutMs: 300, maxRetries: 0 }).catch((e) => e);
        console.log('failed', error.name);
      });
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      // The call fails after 300 ms and the client's own attempt time is 30 s: a process still
      // alive at 10 s was kept alive by something the SDK left running.
      timeout: 10_000,
    });
    expect(result.signal, `the process did not exit by itself: ${result.stderr}`).toBeNull();
    expect(result.stdout).toContain('failed TimeoutError');
  });

  it('after every fault, the process exits by itself: no timer or socket left open', () => {
    const script = `
      import { createServer } from 'node:http';
      import { PartnerClient } from './src/index.ts';
      let n = 0;
      const server = createServer((req, res) => {
        req.resume();
        const path = req.url.split('?')[0];
        if (path.endsWith('/auth/token')) { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ access_token: 't', token_type: 'Bearer', expires_in: 3600 })); return; }
        if (path.endsWith('/me')) { res.writeHead(302, { location: 'http://127.0.0.1:1/x' }); res.end(); return; }
        if (path.endsWith('/fee-estimate')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          const pump = () => { while (!res.destroyed && res.write('a'.repeat(65536))) {} };
          res.on('drain', pump); pump();
          return;
        }
        n++;
        const kind = n % 4;
        if (kind === 0) { res.writeHead(503); res.end('{}'); }
        else if (kind === 1) { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"data":['); setTimeout(() => res.socket?.destroy(), 5); }
        else if (kind === 2) { res.writeHead(200); res.write('{'); }
        else { /* never answers */ }
      });
      server.listen(0, '127.0.0.1', async () => {
        const client = new PartnerClient({ baseUrl: 'http://127.0.0.1:' + server.address().port, clientId: 'c', clientSecret: 's', timeoutMs: 200, maxRetries: 2, retry: { minDelayMs: 5, maxDelayMs: 10 }, maxResponseBytes: 100000 });
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 50);
        const results = await Promise.allSettled([
          ...Array.from({ length: 8 }, () => client.bridge.routes()),
          client.bridge.routes({ signal: controller.signal }),
          client.bridge.transfers.wait({ userId: 'u', transferId: 't' }, { timeoutMs: 300, pollIntervalMs: 20 }),
          client.me(),
          client.bridge.feeEstimate({ routeId: 'r', amount: '1' }),
        ]);
        const untyped = results.filter((r) => r.status === 'rejected' && !(r.reason && r.reason[Symbol.for('partner-s2s-sdk.error')]));
        server.closeAllConnections();
        server.close();
        console.log('settled', results.length, 'untyped', untyped.length);
      });
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.signal, `the process did not exit by itself: ${result.stderr}`).toBeNull();
    expect(result.stdout).toContain('settled 12 untyped 0');
    expect(result.status).toBe(0);
  });

  it('a background refresh that never answers keeps no process alive once the calls are over', () => {
    // A fetch that never settles holds no handle: only a timer of the SDK could keep the process
    // alive, and the refresh's bound (10 minutes here) must not.
    const script = `
      import { PartnerClient } from './src/index.ts';
      let tokens = 0;
      const fetch = async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        if (!url.endsWith('/auth/token'))
          return new Response(JSON.stringify({ data: [] }), { headers: { 'content-type': 'application/json' } });
        if (++tokens > 1) return new Promise(() => {});
        return new Response(JSON.stringify({ access_token: 't', token_type: 'Bearer', expires_in: 3600 }), { headers: { 'content-type': 'application/json' } });
      };
      const realNow = Date.now;
      let skewMs = 0;
      Date.now = () => realNow() + skewMs;
      const client = new PartnerClient({ baseUrl: 'https://partner.test', clientId: 'c', clientSecret: 's', fetch, timeoutMs: 600000 });
      await client.bridge.routes();
      // 50 of the token's 60 minutes later: a refresh is due, and the cached token still serves.
      skewMs = 50 * 60_000;
      await client.bridge.routes();
      // The refresh reaches the token endpoint after the call is over.
      process.on('exit', () => console.log('exited, token requests', tokens));
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.signal, `the process did not exit by itself: ${result.stderr}`).toBeNull();
    expect(result.stdout).toContain('exited, token requests 2');
  });
});
