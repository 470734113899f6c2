// One process of a fleet starting at once: migrates the database it is given, then says so.
import pg from 'pg';
import { migratePostgres } from '../../src/postgres/index.js';

const [url, schema] = process.argv.slice(2) as [string, string];
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  // Connected and loaded, every process waits for the same moment, the start of a deploy: the
  // parent says go on stdin once all of them are ready.
  await pool.query('select 1');
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  await migratePostgres({ pool, schema, timeoutMs: 60_000 });
  process.stdout.write('migrated\n');
} finally {
  await pool.end();
  process.stdin.destroy();
}
