// One process of a fleet starting at once: migrates the database it is given, then says so.
import pg from 'pg';
import { migratePostgres } from '../../src/postgres/index.js';

const [url, schema, startAt] = process.argv.slice(2) as [string, string, string];
const pool = new pg.Pool({ connectionString: url, max: 1 });
try {
  // Connected and loaded, every process waits for the same moment: the start of a deploy.
  await pool.query('select 1');
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
  await migratePostgres({ pool, schema, timeoutMs: 60_000 });
  process.stdout.write('migrated\n');
} finally {
  await pool.end();
}
