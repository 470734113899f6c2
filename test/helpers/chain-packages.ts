import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/*
 * The chain tests' packages: heavy and test-only (anvil's binary is 43 MB), so they are not
 * dependencies of the SDK. The chain suite fetches the exact versions below from the npm registry
 * (`npm pack`), checks each tarball against its pinned sha512 and unpacks it into the git-ignored
 * `.cache/chain/`, which later runs read. Nothing runs at install time; `.ci/run` warms the cache
 * once before the suites (`node --import tsx test/chain/warm.ts`).
 */

const run = promisify(execFile);

/** The repository's root, and the cache under it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHAIN_CACHE = join(ROOT, '.cache', 'chain');

export interface PinnedPackage {
  name: string;
  version: string;
  /** The registry's `dist.integrity` of the tarball. */
  integrity: string;
}

/** `@foundry-rs/anvil` at this version; its binary comes in one package per platform. */
export const ANVIL_VERSION = '1.7.1';

/** The platform packages of `@foundry-rs/anvil@1.7.1` (its `optionalDependencies`). */
const ANVIL_BINARIES: Record<string, PinnedPackage> = {
  'linux-x64': {
    name: '@foundry-rs/anvil-linux-amd64',
    version: ANVIL_VERSION,
    integrity:
      'sha512-+XmShybEaxfCrr0OUUZwYEy2OnYZt5pHH9TzBtLv3+VrK0O/ANuNSVEahqNhKHlgX7GRJ59383ofNhxkRWIYTg==',
  },
  'linux-arm64': {
    name: '@foundry-rs/anvil-linux-arm64',
    version: ANVIL_VERSION,
    integrity:
      'sha512-ykHJmFOGdBR8+9smOKBm9ZZDCCCkLQctiHOAddLvmYx9mPeBDMfq6jP51hKYsO5MG8ClPLSlWe+JpiXPjoXgBQ==',
  },
  'darwin-arm64': {
    name: '@foundry-rs/anvil-darwin-arm64',
    version: ANVIL_VERSION,
    integrity:
      'sha512-JNeu3+A3f/npXLn8SR8EahVcqE7BpO9VQZMcPvSIy27/RNc1GsoEBvSLR99aSvt8sGKWAgNg/EzrtjAPq6mxcA==',
  },
  'darwin-x64': {
    name: '@foundry-rs/anvil-darwin-amd64',
    version: ANVIL_VERSION,
    integrity:
      'sha512-OgwzwY+FsGrsPyDv4mmbhOwARO8s37YHrm2qaNzgSH4VlKnXgJCrnoT7bpgOhLyBPtxXjBT8L2E3b79deesXRg==',
  },
};

export const CHAIN_PACKAGES = {
  /** EntryPoint v0.7: its artifact's creation code lands on the canonical address through CREATE2. */
  entryPoint: {
    name: '@account-abstraction/contracts',
    version: '0.7.0',
    integrity:
      'sha512-Bt/66ilu3u8I9+vFZ9fTd+cWs55fdb9J5YKfrhsrFafH1drkzwuCSL/xEot1GGyXXNJLQuXbMRztQPyelNbY1A==',
  },
  /** The Across SpokePool and its ERC1967Proxy (the version the research read). */
  across: {
    name: '@across-protocol/contracts',
    version: '5.0.27',
    integrity:
      'sha512-zp6BEBTDzRGEp7sNvvdRH4jBF2EuTI4RqFWVvhfkO28630Ow2hbCYeYiyTOjEOzAdqt+dn/sba9D9WirfwabWQ==',
  },
  /** The compiler of the tests' own contracts: the version the account's artifact was built with. */
  solc: {
    name: 'solc',
    version: '0.8.26',
    integrity:
      'sha512-yiPQNVf5rBFHwN6SIf3TUUvVAFKcQqmSUFeq+fb6pNRCo0ZCgpYOZDi3BVoezCPIAcKrVYd/qXlBLUP9wVrZ9g==',
  },
} as const satisfies Record<string, PinnedPackage>;

/** The anvil binary package for this machine, if one is pinned. */
export function anvilPackage(): PinnedPackage | undefined {
  return ANVIL_BINARIES[`${process.platform}-${process.arch}`];
}

const directoryOf = (pinned: PinnedPackage) =>
  join(CHAIN_CACHE, `${pinned.name.replace('/', '+')}@${pinned.version}`);

/** Where a pinned package is (or will be) unpacked: its `package/` folder in the cache. */
export function cachedPackagePath(pinned: PinnedPackage): string {
  return join(directoryOf(pinned), 'package');
}

/**
 * The unpacked package, fetched with `npm pack` on first use and checked against its pinned
 * sha512. Concurrent callers (test files in parallel) each unpack into a folder of their own and
 * rename it into place; the first rename wins and the others use it.
 */
export async function ensurePackage(pinned: PinnedPackage): Promise<string> {
  const target = directoryOf(pinned);
  const marker = join(target, 'integrity');
  const ready = () => existsSync(marker) && readFileSync(marker, 'utf8') === pinned.integrity;
  if (ready()) return join(target, 'package');
  mkdirSync(CHAIN_CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CHAIN_CACHE, '.fetch-'));
  try {
    const spec = `${pinned.name}@${pinned.version}`;
    await run('npm', ['pack', spec, '--pack-destination', scratch, '--loglevel=error'], {
      cwd: scratch,
      timeout: 300_000,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
    }).catch((error: NodeJS.ErrnoException & { stderr?: string }) => {
      // npm's own words: the first error lines name the cause (ECONNREFUSED, E404, …).
      const said = (error.stderr ?? '')
        .split('\n')
        .filter((line) => line.startsWith('npm error') && !line.includes('    at '))
        .slice(0, 4)
        .map((line) => line.replace(/^npm error\s*/, ''));
      throw new Error(`npm pack ${spec} failed: ${said.join('; ') || error.message}`);
    });
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${spec} wrote no tarball`);
    const integrity = `sha512-${createHash('sha512')
      .update(readFileSync(join(scratch, tarball)))
      .digest('base64')}`;
    if (integrity !== pinned.integrity)
      throw new Error(
        `${spec} from the registry has integrity ${integrity}, not the pinned ${pinned.integrity}`,
      );
    await run('tar', ['-xzf', tarball], { cwd: scratch });
    rmSync(join(scratch, tarball));
    writeFileSync(join(scratch, 'integrity'), pinned.integrity);
    // Another process may have put it there meanwhile: its copy is as good, and may be in use.
    if (!ready()) {
      rmSync(target, { recursive: true, force: true });
      try {
        renameSync(scratch, target);
      } catch (error) {
        if (!ready()) throw error;
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return join(target, 'package');
}

/** A compiled contract of the tests' own: its ABI, creation and runtime code. */
export interface CompiledContract {
  abi: readonly unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}

const CONTRACTS = join(ROOT, 'test', 'chain', 'contracts');

/** The settings the account's artifact was built with (test/chain/fixtures/README.md). */
const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'paris',
  metadata: { bytecodeHash: 'none' },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};

/**
 * The tests' own contracts (test/chain/contracts/*.sol) compiled by solc-js from the cache. The
 * output is kept in the cache under the hash of the sources, compiler and settings: the compiler
 * (a second or two to load) runs once per change of a source.
 */
export async function compileTestContracts(): Promise<Record<string, CompiledContract>> {
  const sources: Record<string, { content: string }> = {};
  for (const file of readdirSync(CONTRACTS)
    .filter((name) => name.endsWith('.sol'))
    .sort())
    sources[file] = { content: readFileSync(join(CONTRACTS, file), 'utf8') };
  const input = { language: 'Solidity', sources, settings: SOLC_SETTINGS };
  const key = createHash('sha256')
    .update(JSON.stringify({ solc: CHAIN_PACKAGES.solc.version, input }))
    .digest('hex')
    .slice(0, 16);
  const cached = join(CHAIN_CACHE, 'build', `${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Record<string, CompiledContract>;
  const solc = await ensurePackage(CHAIN_PACKAGES.solc);
  // soljson.js is the compiler itself (Emscripten); its wrapper's dependencies are not needed.
  const soljson = createRequire(import.meta.url)(join(solc, 'soljson.js')) as {
    cwrap(name: string, returns: string, args: string[]): (input: string, a: number, b: number) => string;
  };
  const compile = soljson.cwrap('solidity_compile', 'string', ['string', 'number', 'number']);
  const output = JSON.parse(compile(JSON.stringify(input), 0, 0)) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: Record<string, { object: string }> }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const contracts: Record<string, CompiledContract> = {};
  for (const file of Object.values(output.contracts))
    for (const [name, contract] of Object.entries(file))
      contracts[name] = {
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode!.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode!.object}`,
      };
  mkdirSync(join(CHAIN_CACHE, 'build'), { recursive: true });
  const scratch = `${cached}.${process.pid}`;
  writeFileSync(scratch, JSON.stringify(contracts));
  renameSync(scratch, cached);
  return contracts;
}

/** Everything the chain world needs, fetched and compiled: what `.ci/run` warms. */
export async function ensureChainPackages() {
  const binary = anvilPackage();
  if (!binary) throw new Error(`no anvil binary is pinned for ${process.platform}-${process.arch}`);
  const [anvil, entryPoint, across] = await Promise.all([
    ensurePackage(binary),
    ensurePackage(CHAIN_PACKAGES.entryPoint),
    ensurePackage(CHAIN_PACKAGES.across),
  ]);
  return { anvil: join(anvil, 'bin', 'anvil'), entryPoint, across, contracts: await compileTestContracts() };
}
