/** Shared by the benchmarks: interleaved rounds, medians and a plain table. */
import { appendFileSync } from 'node:fs';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Contender {
  name: string;
  /** Runs one batch of work and returns how many operations it did. */
  run: () => Promise<number> | number;
}

/** A contender's batch: `count` calls one after the other. */
export const sequentially =
  (call: () => Promise<unknown>, count: number): Contender['run'] =>
  async () => {
    for (let i = 0; i < count; i++) await call();
    return count;
  };

/**
 * Runs every contender once per round, rotating the order each round so that none always goes
 * first, and returns each one's median time per operation in microseconds.
 */
export async function interleave(contenders: Contender[], rounds: number): Promise<Map<string, number>> {
  const samples = await interleaveSamples(contenders, rounds);
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}

/** Milliseconds of CPU time this process has used: for synchronous work, what it cost whoever else runs. */
export const cpuClock = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * Like `interleave`, keeping every round's time per operation (µs) for paired comparisons; on
 * `clock` (ms), wall time unless told.
 */
export async function interleaveSamples(
  contenders: Contender[],
  rounds: number,
  clock: () => number = () => performance.now(),
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(round + k) % contenders.length]!;
      const started = clock();
      const ops = await contender.run();
      samples.get(contender.name)!.push(((clock() - started) * 1000) / ops);
    }
  }
  return samples;
}

/**
 * The median over rounds of `a / b` measured in the same round: on a noisy machine both sides of
 * a round share its conditions, so the paired ratio is steadier than a ratio of medians.
 */
export function pairedRatio(a: number[], b: number[]): number {
  return median(a.map((value, i) => value / b[i]!));
}

export function table(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  console.log(`\n${title}`);
  for (const [index, row] of cells.entries()) {
    console.log(
      `  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`,
    );
    if (index === 0) console.log(`  ${widths.map((width) => '-'.repeat(width)).join('  ')}`);
  }
}

export const fixed = (value: number, digits = 2) => value.toFixed(digits);

/**
 * A throughput table: each contender's time per operation, operations per second, and ratio to
 * the baseline contender, all from `interleave`'s medians.
 */
export function rateTable(
  title: string,
  units: { op: string; perSecond: string; baseline: string; label: string; digits: number },
  result: Map<string, number>,
): void {
  const baseline = result.get(units.baseline)!;
  table(
    title,
    ['work', `µs/${units.op}`, `${units.perSecond}/s`, `× ${units.label}`],
    [...result].map(([name, us]) => [
      name,
      fixed(us, units.digits),
      Math.round(1e6 / us).toLocaleString('en'),
      fixed(us / baseline),
    ]),
  );
}

/** One of the rows: a figure against its target, printed and kept for run.ts's summary. */
export interface Verdict {
  row: string;
  figure: string;
  target: string;
  pass: boolean;
}

/**
 * Prints a row's figure, its target and PASS or MISS; under `npm run bench` (which sets
 * BENCH_VERDICTS to a file) also appends it there, so that the run ends with every row in one table.
 */
export function verdict(row: string, figure: string, target: string, pass: boolean): void {
  const line: Verdict = { row, figure, target, pass };
  console.log(`  → ${row}: ${figure} (target ${target}) ${pass ? 'PASS' : 'MISS'}`);
  const file = process.env.BENCH_VERDICTS;
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** `verdict` for a ratio with an upper bound. */
export function ratioVerdict(row: string, ratio: number, atMost: number, digits = 2): void {
  verdict(row, `${fixed(ratio, digits)}×`, `≤ ${fixed(atMost)}×`, ratio <= atMost);
}

/**
 * A figure printed beside the targets but held to none (context, a row of an earlier issue, a
 * baseline's own cost): it never reaches run.ts's table of targets.
 */
export function context(row: string, figure: string): void {
  console.log(`  · ${row}: ${figure} (no target)`);
}

/**
 * A bar per row, each as long as its value against the largest: a curve that reads the same in
 * a terminal and pasted into bench/README.
 */
export function bars(title: string, rows: [label: string, value: number, shown: string][], width = 40): void {
  const top = Math.max(...rows.map(([, value]) => value));
  const labels = Math.max(...rows.map(([label]) => label.length));
  console.log(`\n${title}`);
  for (const [label, value, shown] of rows) {
    const length = Math.max(1, Math.round((value / top) * width));
    console.log(`  ${label.padStart(labels)} │${'█'.repeat(length).padEnd(width)} ${shown}`);
  }
}
