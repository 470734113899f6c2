import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { fromBroker, uniqueName } from './shared.js';
import { findExecutable, freePort, lookedFor, spawnServer } from './spawn-server.js';

/**
 * A real PostgreSQL for the Postgres tests: a throwaway cluster made by initdb in a temporary
 * directory (as the `postgres` user, which initdb requires when run by root), started on
 * 127.0.0.1 on a free port with durability off (fsync, synchronous commit, full page writes), and
 * stopped by its pid. Nothing on the machine is touched. `startPgbouncer` puts a PgBouncer in
 * transaction pooling mode in front of one, as Heroku and most managed poolers run it.
 */
export interface PostgresServer {
  port: number;
  /** A connection string of the superuser `sdk` (trust auth) to the database `postgres`. */
  url: string;
  /** A connection string to `database` on this server (see `createDatabase`). */
  urlOf(database: string): string;
  stop(): Promise<void>;
  /** Stops the server (a fast shutdown), keeping its port and its data directory for `resume`. */
  halt(): Promise<void>;
  /** Starts the server again on the same port and data directory, after `halt`. */
  resume(): Promise<void>;
}

export interface PgbouncerServer {
  port: number;
  /** A connection string through the pooler to `database` (default `postgres`). */
  urlOf(database?: string): string;
  stop(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL the Debian packages installed, if any. */
function findBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

const BIN = findBinDir();
const isRoot = process.getuid?.() === 0;

/** The uid and gid of the `postgres` user, which runs the servers when the tests run as root. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (!isRoot) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const USER = postgresUser();

/** Whether a cluster can be made here; without it the Postgres tests skip (and fail under CI=true). */
export const POSTGRES_SERVER = BIN !== undefined && (!isRoot || USER !== undefined);
export const POSTGRES_MISSING =
  BIN === undefined
    ? 'Postgres tests skipped: initdb not found in /usr/lib/postgresql/*/bin (install the Debian package postgresql: apt-get install -y postgresql)'
    : `Postgres tests skipped: running as root, initdb needs the user postgres to run the server as, and \`id postgres\` found none (PostgreSQL found in ${BIN}; the Debian package postgresql creates the user)`;

/** pgbouncer's path: on PATH, or in /usr/sbin where Debian installs it (off a user's PATH). */
const PGBOUNCER_BIN = ((bin) =>
  bin !== undefined && spawnSync(bin, ['--version'], { encoding: 'utf8' }).status === 0 ? bin : undefined)(
  findExecutable('pgbouncer'),
);

/** Whether pgbouncer is installed; without it the PgBouncer tests skip (and fail under CI=true). */
export const PGBOUNCER = PGBOUNCER_BIN !== undefined;
export const PGBOUNCER_MISSING = `PgBouncer tests skipped: ${lookedFor('pgbouncer')} (install the Debian package pgbouncer: apt-get install -y pgbouncer)`;

/** A temporary directory the `postgres` user owns. */
function ownedDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (USER) chownSync(dir, USER.uid, USER.gid);
  return dir;
}

/** Spawns `command` as the `postgres` user, waits for `ready` in its output; answers how to stop it. */
function runServer(
  command: string,
  args: string[],
  ready: string,
  stopSignal: NodeJS.Signals,
): Promise<() => Promise<void>> {
  // SIGQUIT, not SIGKILL, for an orphan: the server's own processes then end with it.
  return spawnServer(command, args, { ready, stopSignal, orphanSignal: 'SIGQUIT', user: USER });
}

/** `halt` once for good, then the directory removed; the same promise to every caller. */
function stopOnce(halt: () => Promise<void>, dir: string): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= halt().then(() => rmSync(dir, { recursive: true, force: true }));
    return stopped;
  };
}

export async function startPostgres(): Promise<PostgresServer> {
  if (!BIN) throw new Error(POSTGRES_MISSING);
  const dir = ownedDir('postgres-test-');
  const data = join(dir, 'data');
  const init = spawnSync(
    join(BIN, 'initdb'),
    ['-D', data, '-U', 'sdk', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'],
    { encoding: 'utf8', ...(USER ? { uid: USER.uid, gid: USER.gid } : {}) },
  );
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr}`);
  }
  const port = await freePort();
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: '200',
  };
  const args = ['-D', data, '-p', String(port), '-k', dir];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  // SIGINT: the fast shutdown, which ends the sessions and stops without waiting for clients.
  const run = () =>
    runServer(join(BIN!, 'postgres'), args, 'database system is ready to accept connections', 'SIGINT');
  let halt = await run();
  const stop = stopOnce(() => halt(), dir);
  const urlOf = (database: string) => `postgres://sdk@127.0.0.1:${port}/${database}`;
  return {
    port,
    url: urlOf('postgres'),
    urlOf,
    stop,
    halt: () => halt(),
    async resume() {
      halt = await run();
    },
  };
}

/** A PgBouncer in `pool_mode = transaction` in front of `server`, on a free port of 127.0.0.1. */
export async function startPgbouncer(server: Pick<PostgresServer, 'port'>): Promise<PgbouncerServer> {
  const dir = ownedDir('pgbouncer-test-');
  const port = await freePort();
  const users = join(dir, 'users.txt');
  writeFileSync(users, '"sdk" ""\n');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=127.0.0.1 port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 10',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  if (USER) for (const file of [users, ini]) chownSync(file, USER.uid, USER.gid);
  if (!PGBOUNCER_BIN) throw new Error(PGBOUNCER_MISSING);
  const stop = stopOnce(await runServer(PGBOUNCER_BIN, [ini], 'process up', 'SIGINT'), dir);
  return { port, urlOf: (database = 'postgres') => `postgres://sdk@127.0.0.1:${port}/${database}`, stop };
}

/** A database on a server: `url` reaches it; the rest as `PostgresServer`. */
export interface PostgresDatabase extends PostgresServer {
  database: string;
}

/**
 * A database of this file's own on the run's shared PostgreSQL (started once by
 * test/global-setup.ts for every file that asks), or on a server of its own when the file runs
 * without it. `url` reaches that database; `stop` stops only a server of its own, and a shared one
 * cannot be halted (a test that stops its server starts its own with `startPostgres`).
 */
export async function sharedPostgres(): Promise<PostgresDatabase> {
  const shared = await fromBroker<{ port: number }>('postgres');
  const database = uniqueName('file');
  let server: PostgresServer;
  if (shared) {
    const refuse = () => Promise.reject(new Error("the shared PostgreSQL is not this file's to halt"));
    const urlOf = (name: string) => `postgres://sdk@127.0.0.1:${shared.port}/${name}`;
    server = {
      port: shared.port,
      url: urlOf('postgres'),
      urlOf,
      stop: async () => {},
      halt: refuse,
      resume: refuse,
    };
  } else {
    server = await startPostgres();
  }
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  return { ...server, database, url: server.urlOf(database) };
}

/**
 * The run's shared PgBouncer in front of the shared PostgreSQL (or one of this file's own in front
 * of `server` without the run's setup); `urlOf()` reaches `server`'s database through it.
 */
export async function sharedPgbouncer(server: PostgresDatabase): Promise<PgbouncerServer> {
  const shared = await fromBroker<{ port: number }>('pgbouncer');
  const own = shared ? undefined : await startPgbouncer(server);
  const port = shared?.port ?? own!.port;
  return {
    port,
    urlOf: (database = server.database) => `postgres://sdk@127.0.0.1:${port}/${database}`,
    stop: async () => {
      await own?.stop();
    },
  };
}
