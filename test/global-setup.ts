import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleEntry } from './helpers/bundle.js';
import { startPgbouncer, startPostgres } from './helpers/postgres-server.js';
import { startRedis } from './helpers/redis-server.js';

/*
 * One broker per run: a file asks it (test/helpers/shared.ts) for a redis-server, a cluster one, a
 * PostgreSQL, a PgBouncer or a bundled entry, and the first file to ask starts it for all; a run
 * that asks for none starts none. Each file keeps to its own key prefix or database, so files stay
 * independent and run in parallel. At the end every server is stopped by its pid. A file run
 * without this setup (a script, another config) starts servers of its own, as before.
 */

type Stop = () => Promise<void>;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stops: Stop[] = [];
  const bundles = mkdtempSync(join(tmpdir(), 'sdk-bundles-'));
  const started = new Map<string, Promise<unknown>>();
  const once = (key: string, start: () => Promise<unknown>) => {
    let promise = started.get(key);
    if (!promise) {
      promise = start();
      started.set(key, promise);
    }
    return promise;
  };
  const postgres = () =>
    once('postgres', async () => {
      const server = await startPostgres();
      stops.push(server.stop);
      return { port: server.port };
    }) as Promise<{ port: number }>;
  const redis = (cluster: boolean) =>
    once(cluster ? 'redis-cluster' : 'redis', async () => {
      const server = await startRedis({ cluster });
      stops.push(server.stop);
      return { port: server.port };
    });
  const answers: Record<string, (url: URL) => Promise<unknown>> = {
    '/redis': () => redis(false),
    '/redis-cluster': () => redis(true),
    '/postgres': postgres,
    '/pgbouncer': () =>
      once('pgbouncer', async () => {
        const bouncer = await startPgbouncer(await postgres());
        stops.push(bouncer.stop);
        return { port: bouncer.port };
      }),
    '/bundle': (url) => {
      const entry = url.searchParams.get('entry') ?? '';
      return once(`bundle:${entry}`, async () => ({
        path: await bundleEntry(entry, join(bundles, String(started.size))),
      }));
    },
  };
  const broker = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://broker');
    const answer = answers[url.pathname];
    if (!answer) return void res.writeHead(404).end(`no ${url.pathname}`);
    answer(url).then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) => res.writeHead(500).end(String((error as Error)?.stack ?? error)),
    );
  });
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  project.provide('testBroker', `http://127.0.0.1:${(broker.address() as AddressInfo).port}`);

  return async () => {
    broker.close();
    // Settled first: a server still starting when the run ends is stopped too.
    await Promise.allSettled(started.values());
    await Promise.allSettled(stops.reverse().map((stop) => stop()));
    rmSync(bundles, { recursive: true, force: true });
  };
}
