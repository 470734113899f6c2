// Fetches the chain tests' pinned packages into .cache/chain/ (npm pack, integrity checked) and
// compiles the tests' contracts once, so that the suites after it read the cache: `.ci/run` runs it.
//   node --import tsx test/chain/warm.ts
import { ensureChainPackages } from '../helpers/chain-packages.js';

const packages = await ensureChainPackages();
console.log(`anvil ${packages.anvil}`);
console.log(`contracts ${Object.keys(packages.contracts).join(', ')}`);
