/**
 * `npm run bench`: every benchmark, each against its baseline in the same process run. Each runs
 * in a fresh process so that one's heap and JIT state do not weigh on the next; the run ends with
 * every target row, its figure and PASS or MISS, in one table.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { burst } from './burst.js';
import { callbacks } from './callbacks.js';
import { claims } from './claims.js';
import { fleet } from './fleet.js';
import { imports } from './imports.js';
import { table, type Verdict } from './lib.js';
import { latency, lists, overhead } from './overhead.js';
import { packageSize } from './package.js';
import { tokens } from './tokens.js';
import { trackerClaims } from './tracker-claims.js';
import { trackerReads } from './tracker-reads.js';
import { trackerScale } from './tracker-scale.js';
import { verifier } from './verifier.js';

const all = {
  overhead,
  latency,
  lists,
  burst,
  tokens,
  verifier,
  imports,
  callbacks,
  package: packageSize,
  fleet,
  claims,
  trackerClaims,
  trackerReads,
  trackerScale,
};
const only = process.argv.slice(2);
if (only.length === 0) {
  console.log(
    `partner-s2s-sdk benchmarks, ${new Date().toISOString().slice(0, 10)}, node ${process.version}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const verdicts = join(dir, 'verdicts.jsonl');
  let failed = 0;
  for (const name of Object.keys(all)) {
    const result = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, name], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_VERDICTS: verdicts },
    });
    if (result.status !== 0) {
      console.error(`benchmark ${name} failed (exit ${result.status ?? result.signal})`);
      failed++;
    }
  }
  let rows: Verdict[] = [];
  try {
    rows = readFileSync(verdicts, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Verdict);
  } catch {}
  rmSync(dir, { recursive: true, force: true });
  table(
    `Targets, node ${process.version}`,
    ['row', 'figure', 'target', ''],
    rows.map((row) => [row.row, row.figure, row.target, row.pass ? 'PASS' : 'MISS']),
  );
  process.exit(failed > 0 ? 1 : 0);
} else {
  for (const name of only) {
    const run = all[name as keyof typeof all];
    if (!run) throw new Error(`no benchmark ${name}; choose from ${Object.keys(all).join(', ')}`);
    await run();
  }
}
