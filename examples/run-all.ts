/** Runs every example against the embedded simulator; CI uses it. Fails when one fails. */
import { spawnSync } from 'node:child_process';

const examples = ['bridge', 'callbacks-server', 'errors', 'transfers', 'any-endpoint', 'tracker'];
let failed = 0;
for (const name of examples) {
  const env = { ...process.env };
  delete env.PARTNER_BASE_URL;
  const result = spawnSync(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    stdio: 'inherit',
    env,
    timeout: 60_000,
  });
  const ok = result.status === 0;
  if (!ok) failed++;
  console.log(`example ${name}: ${ok ? 'ok' : `failed (${result.status ?? result.signal})`}\n`);
}
console.log(`${examples.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
