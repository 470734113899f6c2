/** Runs every example against the embedded simulator; CI uses it. Fails when one fails. */
import { spawnSync } from 'node:child_process';

const examples = [
  'bridge',
  'callbacks-server',
  'errors',
  'transfers',
  'any-endpoint',
  'slow-signer',
  'tracker',
];
// A line that shows `undefined` or `NaN` printed a field that is not there: the example lies.
const HOLLOW = /\b(undefined|NaN)\b/;
let failed = 0;
for (const name of examples) {
  const env = { ...process.env };
  delete env.PARTNER_BASE_URL;
  const result = spawnSync(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
  process.stdout.write(result.stdout ?? '');
  const hollow = (result.stdout ?? '').split('\n').find((line) => HOLLOW.test(line));
  const ok = result.status === 0 && hollow === undefined;
  if (!ok) failed++;
  const why =
    hollow === undefined
      ? `exit ${result.status ?? result.signal}`
      : `printed ${JSON.stringify(hollow.trim())}`;
  console.log(`example ${name}: ${ok ? 'ok' : `failed (${why})`}\n`);
}
console.log(`${examples.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
