import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshConstruct } from '../helpers/batches.js';
import { account } from '../helpers/bridge-service.js';
import { runMain } from '../helpers/cli.js';

/*
 * `partner-s2s-sdk confirm --rpc <url> [--from-block N] <construct.json>`: the status on one line
 * and exit 0; a bad URL, or one nothing answers at, one line on stderr and a non-zero exit.
 */

const construct = freshConstruct(account.address);
const NONCE = BigInt(construct.bundle.userOp.nonce as string);
const tmp = mkdtempSync(join(tmpdir(), 'partner-cli-confirm-'));
const file = join(tmp, 'construct.json');
writeFileSync(file, JSON.stringify({ data: construct }));

describe('partner-s2s-sdk confirm', () => {
  let server: Server;
  let rpc: string;
  let currentNonce = NONCE;

  beforeAll(async () => {
    // A JSON-RPC node on 127.0.0.1: the sender's nonce, block 10, no logs.
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        const { id, method } = JSON.parse(body) as { id: number; method: string };
        const result =
          method === 'eth_call'
            ? `0x${currentNonce.toString(16).padStart(64, '0')}`
            : method === 'eth_blockNumber'
              ? '0xa'
              : [];
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    rpc = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/aPiKeY0123456789`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('prints the status first, on one line, and exits 0', async () => {
    currentNonce = NONCE;
    const pending = await runMain(['confirm', '--rpc', rpc, file]);
    expect(pending).toMatchObject({ code: 0, stderr: '' });
    expect(pending.stdout).toMatch(/^pending: .*\n$/);

    currentNonce = NONCE + 1n;
    const superseded = await runMain(['confirm', '--rpc', rpc, '--from-block', '3', file]);
    expect(superseded.code).toBe(0);
    expect(superseded.stdout).toMatch(/^superseded: /);
    const json = await runMain(['confirm', '--rpc', rpc, '--json', file]);
    // Block 10 is within the look-back, which then reaches the first block: the search was whole.
    expect(JSON.parse(json.stdout)).toEqual({ status: 'superseded', currentNonce: String(NONCE + 1n) });
  });

  it('a bad URL, or one where nothing answers: one line on stderr, a non-zero exit, no key shown', async () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/x', 'http://127.0.0.1:1/v2/aPiKeY0123456789']) {
      const result = await runMain(['confirm', '--rpc', url, file]);
      expect(result.code, url).not.toBe(0);
      expect(result.stdout, url).toBe('');
      expect(result.stderr.split('\n').filter(Boolean), url).toHaveLength(1);
      expect(result.stderr, url).not.toContain('aPiKeY');
    }
  }, 20_000);

  it('refuses a missing --rpc or a block that is no number as usage', async () => {
    expect((await runMain(['confirm', file])).code).toBe(2);
    expect((await runMain(['confirm', '--rpc', rpc, '--from-block', 'latest', file])).code).toBe(2);
  });
});
