/**
 * `npm run bench`: every benchmark, each against its baseline in the same process run. Each runs
 * in a fresh process so that one's heap and JIT state do not weigh on the next.
 */
import { spawnSync } from 'node:child_process';
import { callbacks } from './callbacks.js';
import { fleet } from './fleet.js';
import { imports } from './imports.js';
import { lists, overhead } from './overhead.js';
import { tokens } from './tokens.js';
import { verifier } from './verifier.js';

const all = { overhead, lists, tokens, verifier, imports, callbacks, fleet };
const only = process.argv.slice(2);
if (only.length === 0) {
  console.log(
    `partner-s2s-sdk benchmarks, ${new Date().toISOString().slice(0, 10)}, node ${process.version}`,
  );
  for (const name of Object.keys(all)) {
    const result = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, name], {
      stdio: 'inherit',
    });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
} else {
  for (const name of only) {
    const run = all[name as keyof typeof all];
    if (!run) throw new Error(`no benchmark ${name}; choose from ${Object.keys(all).join(', ')}`);
    await run();
  }
}
