import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';
import { DOCUMENTS } from '../helpers/documents.js';

/*
 * The simulator's admin API over real HTTP, as a browser page or a rebinding attacker would reach
 * it: requests are sent with node:http so that Host, Origin and Content-Type are exactly as given.
 */

const CURL_SAFE = /^[A-Za-z0-9_-]+$/;
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

interface Sent {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request to `url`, headers sent as given (Host included); resolves with status and body. */
function send(url: string, { method = 'POST', headers = {}, body }: Sent = {}) {
  return new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let sim: PartnerSimulator | undefined;
let server: { url: string; close: () => Promise<void> } | undefined;
afterEach(async () => {
  await server?.close();
  sim?.close();
  server = undefined;
  sim = undefined;
});

async function start(options: Parameters<typeof createPartnerSimulator>[0] = {}) {
  sim = createPartnerSimulator(options);
  server = await sim.listen();
  const port = new URL(server.url).port;
  return { sim, admin: `${server.url}${sim.adminPath}`, port };
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Sets the demo user's balance through the admin API; what it answers, and whether it took. */
async function fund(admin: string, s: PartnerSimulator, raw: string, headers: Record<string, string>) {
  const body = JSON.stringify({ userId: s.demo.userId, chainId: 8453, token: USDC_BASE, raw });
  const answer = await send(`${admin}/fund`, { headers, body });
  return { ...answer, took: s.balance(s.demo.userId, 8453, USDC_BASE) === BigInt(raw) };
}

describe('the admin API refuses what a browser page could send it', () => {
  it.each([
    'evil.example',
    'evil.example:4010',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    '0.0.0.0',
    '10.0.0.1',
    '[::2]',
    'localhost@evil.example',
  ])('a Host that is not loopback (%s): 403, nothing done', async (host) => {
    const { sim, admin } = await start();
    const answer = await fund(admin, sim, '7', { ...JSON_TYPE, host });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN' });
    expect(answer.took).toBe(false);
    // Reads are refused too: a rebound page could otherwise read the demo secret after a reset.
    expect((await send(`${admin}/callbacks`, { method: 'GET', headers: { host } })).status).toBe(403);
  });

  it.each(['localhost', 'sim.localhost', '127.0.0.1', '127.9.9.9', '[::1]'])(
    'a loopback Host (%s, with the port) is served',
    async (name) => {
      const { sim, admin, port } = await start();
      expect(await fund(admin, sim, '8', { ...JSON_TYPE, host: `${name}:${port}` })).toMatchObject({
        status: 200,
        took: true,
      });
    },
  );

  it.each(['http://evil.example', 'null', 'http://localhost:1'])(
    'an Origin other than its own (%s): 403, nothing done',
    async (origin) => {
      const { sim, admin } = await start();
      const answer = await fund(admin, sim, '9', { ...JSON_TYPE, origin });
      expect(answer).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' }, took: false });
    },
  );

  it('its own Origin is served', async () => {
    const { sim, admin, port } = await start();
    const answer = await fund(admin, sim, '10', {
      ...JSON_TYPE,
      host: `localhost:${port}`,
      origin: `http://localhost:${port}`,
    });
    expect(answer).toMatchObject({ status: 200, took: true });
  });

  it.each([
    ['no content type', {}],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }],
  ])('a body that is not application/json (%s): 415, nothing done', async (_, headers) => {
    const { sim, admin } = await start();
    const answer = await fund(admin, sim, '11', headers);
    expect(answer).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' }, took: false });
    // Even a call that takes no arguments: a page can POST an empty body.
    expect((await send(`${admin}/reset`, { headers })).status).toBe(415);
  });

  it('application/json with parameters is served; a GET needs no content type', async () => {
    const { sim, admin } = await start();
    const answer = await fund(admin, sim, '12', { 'content-type': 'Application/JSON; charset=utf-8' });
    expect(answer).toMatchObject({ status: 200, took: true });
    expect(await send(`${admin}/routes`, { method: 'GET' })).toMatchObject({ status: 200 });
  });

  it('with adminToken, every call needs Authorization: Bearer <token> (401 otherwise)', async () => {
    const token = 'adm-7f3c9e1d2b';
    const { sim, admin } = await start({ adminToken: token });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, `Basic ${token}`, token]) {
      const headers = { ...JSON_TYPE, ...(authorization ? { authorization } : {}) };
      const answer = await fund(admin, sim, '13', headers);
      expect(answer, String(authorization)).toMatchObject({
        status: 401,
        body: { code: 'UNAUTHORIZED' },
        took: false,
      });
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer /);
      expect((await send(`${admin}/callbacks`, { method: 'GET', headers })).status).toBe(401);
    }
    const ok = await fund(admin, sim, '14', { ...JSON_TYPE, authorization: `Bearer ${token}` });
    expect(ok).toMatchObject({ status: 200, took: true });
    // The token does not excuse the other checks.
    const cross = await fund(admin, sim, '15', {
      ...JSON_TYPE,
      authorization: `Bearer ${token}`,
      origin: 'http://evil.example',
    });
    expect(cross).toMatchObject({ status: 403, took: false });
    const plain = await fund(admin, sim, '16', { authorization: `Bearer ${token}` });
    expect(plain).toMatchObject({ status: 415, took: false });
  });

  it('the same rules hold on sim.fetch, and the partner API is not affected', async () => {
    const s = createPartnerSimulator({ adminToken: 'tok-1' });
    const url = `${s.baseUrl}${s.adminPath}/advanceClock`;
    const before = s.now();
    const post = (headers: Record<string, string>) =>
      s.fetch(url, { method: 'POST', headers, body: '{"ms":3600000}' });
    expect((await post(JSON_TYPE)).status).toBe(401);
    expect((await post({ authorization: 'Bearer tok-1' })).status).toBe(415);
    expect(s.now() - before).toBeLessThan(3_600_000);
    expect((await post({ ...JSON_TYPE, authorization: 'Bearer tok-1' })).status).toBe(200);
    expect(s.now() - before).toBeGreaterThanOrEqual(3_600_000);
    const token = await s.fetch(`${s.baseUrl}/api/v1/s2s/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${s.demo.credentials.clientId}&client_secret=${s.demo.credentials.clientSecret}`,
    });
    expect(token.status).toBe(200);
  });

  it('refuses an adminToken that cannot travel in a header', () => {
    for (const adminToken of ['', 'has space', 'line\nbreak', 'é'])
      expect(() => createPartnerSimulator({ adminToken }), JSON.stringify(adminToken)).toThrow(/adminToken/);
  });
});

describe('client secrets are curl-safe', () => {
  it('demo, created and rotated secrets, seeded or not, are [A-Za-z0-9_-]', () => {
    for (const options of [{}, { seed: 1 }, { seed: 42 }]) {
      const s = createPartnerSimulator(options);
      const org = s.createOrganisation({ scopes: ['all:read'] });
      const created = s.createCredential({ organisationId: org, scopes: ['all:read'] });
      const rotated = s.rotateCredential(created.clientId, { graceMs: 0 });
      for (const secret of [s.demo.credentials.clientSecret, created.clientSecret, rotated.clientSecret])
        expect(secret).toMatch(CURL_SAFE);
    }
  });

  it('a token for the raw secret in a Basic header (curl -u) or an unencoded form body', async () => {
    const { sim } = await start();
    const tokenUrl = `${server!.url}/api/v1/s2s/auth/token`;
    const { clientId, clientSecret } = sim.demo.credentials;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    // What `curl -u "$ID:$SECRET" -d grant_type=client_credentials` sends: no form encoding.
    const basic = await fetch(tokenUrl, {
      method: 'POST',
      headers: { ...form, authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}` },
      body: 'grant_type=client_credentials',
    });
    expect(basic.status).toBe(200);
    expect(((await basic.json()) as { token_type: string }).token_type).toBe('Bearer');
    const inBody = await fetch(tokenUrl, {
      method: 'POST',
      headers: form,
      body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${clientSecret}`,
    });
    expect(inBody.status).toBe(200);
    // The form decoding of the Basic credential stays: a percent-encoded one is still taken.
    const percent = (value: string) => value.replaceAll('_', '%5F');
    const encoded = await fetch(tokenUrl, {
      method: 'POST',
      headers: { ...form, authorization: `Basic ${btoa(`${percent(clientId)}:${percent(clientSecret)}`)}` },
      body: 'grant_type=client_credentials',
    });
    expect(encoded.status).toBe(200);
  });
});

/** Every `curl … -X POST … <admin>/<operation> -d <body>` of a document, continuations joined. */
function adminPosts(file: string) {
  const text = readFileSync(file, 'utf8').replace(/\\\n\s*/g, '');
  const lines = text
    .split('\n')
    .filter((line) => /curl .*-X POST .*__admin|curl .*-X POST .*\$ADMIN/.test(line));
  return lines.map((line) => {
    const headers = [...line.matchAll(/-H '([^':]+): ([^']*)'/g)].map(([, name, value]) => [name!, value!]);
    const operation = /(?:\$ADMIN|__admin\/v1)\/(\w+)/.exec(line)![1]!;
    const quoted = /-d (?:'([^']*)'|"((?:[^"\\]|\\.)*)")/.exec(line)!;
    // Shell variables stand for ids: any string will do to see how the call is taken.
    const body = quoted[1] ?? quoted[2]!.replace(/\\"/g, '"').replace(/\$\w+/g, 'x');
    return { line, headers: Object.fromEntries(headers), operation, body };
  });
}

describe('the documented curl calls', () => {
  // The README and every guide: the admin calls are shown in docs/simulator.md, and wherever else
  // a document shows one, it must be taken as well.
  const documents = DOCUMENTS.filter((file) => adminPosts(file).length > 0);

  it('docs/simulator.md shows admin calls', () => {
    expect(documents).toContain('docs/simulator.md');
  });

  it.each(documents)('in %s are taken by the admin API', async (file) => {
    const posts = adminPosts(file);
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) {
      const { admin } = await start();
      const answer = await send(`${admin}/${post.operation}`, { headers: post.headers, body: post.body });
      // Placeholder ids may be unknown (400); the call itself must get through.
      expect([200, 400], post.line).toContain(answer.status);
      await server!.close();
      server = undefined;
    }
  });
});
