import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const servers: Server[] = [];

/**
 * Serves `handler` (a router's `nodeHandler`, or a wrapper around it) on 127.0.0.1 on a free port,
 * and answers its callback URL. `closeCallbackServers` (in an `afterEach`) closes every one.
 */
export async function serveCallbacks(handler: RequestListener, requestTimeout?: number): Promise<string> {
  const server = createServer(requestTimeout === undefined ? {} : { requestTimeout }, handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
}

/** Closes every server `serveCallbacks` started, open connections included. */
export async function closeCallbackServers(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
