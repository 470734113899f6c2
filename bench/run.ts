/** `npm run bench`: every benchmark, each against its baseline in the same process run. */
import { callbacks } from './callbacks.js';
import { imports } from './imports.js';
import { overhead } from './overhead.js';
import { tokens } from './tokens.js';
import { verifier } from './verifier.js';

const only = process.argv.slice(2);
const all = { overhead, tokens, verifier, imports, callbacks };
console.log(`partner-s2s-sdk benchmarks, ${new Date().toISOString().slice(0, 10)}, node ${process.version}`);
for (const [name, run] of Object.entries(all)) {
  if (only.length === 0 || only.includes(name)) await run();
}
