import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import { ProxyAgent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../src/index.js';
import { createPartnerSimulator, type PartnerSimulator } from '../../src/testing/index.js';

/** A forward proxy on 127.0.0.1 that tunnels CONNECT and relays absolute-form requests, noting each. */
async function startProxy() {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url as string);
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url as string).split(':');
    const upstream = connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let sim: PartnerSimulator | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  sim?.close();
});

/** The simulator over HTTP, a proxy in front of it, and an undici dispatcher through that proxy. */
async function simulatorBehindProxy() {
  sim = createPartnerSimulator();
  const server = await sim.listen();
  cleanups.push(server.close);
  const proxy = await startProxy();
  cleanups.push(proxy.close);
  const dispatcher = new ProxyAgent(proxy.url);
  cleanups.push(() => dispatcher.close());
  return { server, proxy, dispatcher };
}

describe('the proxy recipe: undici fetch with a ProxyAgent dispatcher', () => {
  it('sends the token request and every call through a real local proxy', async () => {
    const { server, proxy, dispatcher } = await simulatorBehindProxy();

    const client = new PartnerClient({
      baseUrl: server.url,
      ...(sim as PartnerSimulator).demo.credentials,
      fetch: undiciFetch,
      fetchOptions: { dispatcher },
    });
    const routes = await client.bridge.routes();
    expect(routes.length).toBeGreaterThan(0);
    const { response, requestId } = await client.me().withResponse();
    expect(response.status).toBe(200);
    expect(requestId).toMatch(/^req_sim_\d+$/);
    const target = new URL(server.url).host;
    // Tunnelled or relayed, each went through the proxy to the simulator.
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.every((line) => line.includes(target))).toBe(true);
  });

  it('takes the dispatcher per call too', async () => {
    const { server, proxy, dispatcher } = await simulatorBehindProxy();
    const client = new PartnerClient({
      baseUrl: server.url,
      ...(sim as PartnerSimulator).demo.credentials,
      fetch: undiciFetch,
    });
    await client.getScopes();
    expect(proxy.seen).toEqual([]);
    await client.bridge.routes({ fetchOptions: { dispatcher } });
    expect(proxy.seen.length).toBeGreaterThan(0);
  });
});
