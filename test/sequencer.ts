import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that run longest, longest first (seconds on a 2-core machine beside the others). A
 * run ends with its slowest worker: a 50 s file picked up last would add its 50 s to the run's
 * end. Vitest orders by the durations it cached, but a fresh clone (CI) has no cache and would
 * run the largest files first, which are not the slowest. A folder ends with `/`.
 */
export const LONGEST_FIRST = [
  'test/tracker/store-outage.test.ts', // 50: leases running out during outages
  'test/callbacks/fleet.test.ts', // 50: processes on one Redis
  'test/tracker/fleet-chaos.test.ts', // 45: workers killed under load
  'test/cli/cli.test.ts', // 30: a process per command
  'test/postgres/', // 20 + 15
  'test/import-cost.test.ts', // 20
  'test/http/tracing.test.ts', // 20
  'test/tracker/lease-fleet.test.ts', // 20
  'test/cli/simulate-chain.test.ts', // 16
  'test/docs.test.ts', // 16
  'test/redis/', // 14
  'test/consumer-types.test.ts', // 12
  'test/cli/simulate.test.ts', // 10
  'test/http/faults.test.ts', // 8: processes that must exit by themselves
  'test/fuzz.test.ts', // 7
  'test/callbacks/bounds.test.ts', // 7: bodies that drip
];

/** Whether `entry` of the list names `file`: the file itself, or a folder it is in. */
const names = (entry: string, file: string) =>
  entry.endsWith('/') ? file.startsWith(entry) : file === entry;

const rank = (file: string) => {
  const index = LONGEST_FIRST.findIndex((entry) => names(entry, file));
  return index === -1 ? LONGEST_FIRST.length : index;
};

/** The long files first in the order above, then the rest as vitest orders them. */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const ranked = sorted.map((spec, position) => ({
      spec,
      position,
      rank: rank(relative(spec.project.config.root, spec.moduleId).split('\\').join('/')),
    }));
    return ranked.sort((a, b) => a.rank - b.rank || a.position - b.position).map(({ spec }) => spec);
  }
}
