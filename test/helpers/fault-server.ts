import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FaultHandler = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

/**
 * A real HTTP server on 127.0.0.1 whose behaviour per path is given by the test. It counts
 * requests per "METHOD /path", so a test can bound the attempts a fault causes.
 */
export async function faultServer(handlers: Record<string, FaultHandler>) {
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/^\/api\/v1\/s2s/, '');
    const key = `${req.method} ${path}`;
    const attempt = (counts.get(key) ?? 0) + 1;
    counts.set(key, attempt);
    const handler = handlers[key] ?? handlers[`${req.method} *`];
    req.resume();
    if (!handler) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: key }));
      return;
    }
    handler(req, res, attempt);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (key: string) => counts.get(key) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const token: FaultHandler = (_req, res, attempt) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(
    JSON.stringify({
      access_token: `tok-${attempt}`,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'bridge:read transactions:write',
    }),
  );
};

export function jsonReply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
