import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * Which Node.js versions the SDK supports is said once, in the README's "Node.js versions"
 * statement, and three things must agree with it: `engines` in package.json (what npm tells a
 * partner), the lines `.ci/run` installs and runs the suite on (what is tested), and every other
 * place of the README that names a Node version.
 */

const readme = readFileSync('README.md', 'utf8');
const ci = readFileSync('.ci/run', 'utf8');
const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines
  .node;

const ANCHOR = '(#nodejs-versions)';
const STATEMENT = /\*\*Supported Node\.js lines: ([^*]+)\.\*\*/;

/** The statement: the supported lines (majors) and the lowest version of the lowest line. */
function statement() {
  const found = [...readme.matchAll(new RegExp(STATEMENT, 'g'))];
  expect(found, 'one "**Supported Node.js lines: …**" statement in the README').toHaveLength(1);
  const text = found[0]![1]!;
  const floor = /\((\d+\.\d+(?:\.\d+)?) or later\)/.exec(text)?.[1];
  const lines = (text.replace(/\([^)]*\)/g, '').match(/\d+/g) ?? []).map(Number);
  return { floor, lines };
}

/** A section of the README: from its heading to the next heading of the same level or above. */
function section(title: string): string {
  const heading = new RegExp(`^(#+) ${title}$`, 'm').exec(readme);
  expect(heading, `a "${title}" section in the README`).not.toBeNull();
  const rest = readme.slice(heading!.index + heading![0].length);
  const next = rest.search(new RegExp(`^#{1,${heading![1]!.length}} `, 'm'));
  return next === -1 ? rest : rest.slice(0, next);
}

/** The lines `.ci/run` installs, from its `lines=(22 24)`. */
function ciLines(): number[] {
  const found = /^lines=\(([\d ]+)\)$/m.exec(ci);
  expect(found, '.ci/run sets lines=(…)').not.toBeNull();
  return found![1]!.trim().split(/\s+/).map(Number);
}

/**
 * Lines of `text` that name a Node major outside `supported` without saying it is not supported
 * (`Node 20`, `Node.js 18`, `Node (20 here`).
 */
function unsupportedClaims(text: string, supported: number[]): string[] {
  return text
    .split('\n')
    .filter((line) =>
      [...line.matchAll(/\bNode(?:\.js)?\s+\(?v?(\d+)/g)].some(
        (match) => !supported.includes(Number(match[1])) && !/not supported/.test(line),
      ),
    );
}

describe('one Node.js policy', () => {
  it('the README states the supported lines once, with the lowest version engines allows', () => {
    const { floor, lines } = statement();
    const enginesFloor = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(engines)?.[1];
    expect(enginesFloor, `engines.node ${engines} is a ">=x.y" floor`).toBeDefined();
    expect(floor).toBe(enginesFloor);
    expect(lines[0], 'the lowest supported line is the one the engines floor is on').toBe(
      Number(enginesFloor!.split('.')[0]),
    );
  });

  it('.ci/run installs and tests exactly the supported lines', () => {
    expect(ciLines()).toEqual(statement().lines);
  });

  it('Install, Runtime support and Development point to the statement and claim no other version', () => {
    const { lines } = statement();
    const policy = section('Node\\.js versions');
    expect(policy).toMatch(STATEMENT);
    for (const title of ['Install', 'Runtime support', 'Development']) {
      const text = section(title).replace(policy, '');
      expect(text, `${title} links to the Node.js versions statement`).toContain(ANCHOR);
      expect(text, `${title} names no version floor of its own`).not.toMatch(/>=\s*\d|\d+\.\d+ or later/);
    }
    expect(unsupportedClaims(readme, lines)).toEqual([]);
  });

  it(".ci/run's comments say the same", () => {
    // Each comment: a run of consecutive comment lines.
    const comments = ci
      .split(/\n(?!\s*#)/)
      .map((chunk) =>
        chunk
          .split('\n')
          .filter((line) => line.trimStart().startsWith('#'))
          .join('\n'),
      )
      .filter(Boolean);
    expect(unsupportedClaims(comments.join('\n'), ciLines())).toEqual([]);
    // The run on the machine's default Node is there for the README's two commands, and says so.
    const aboutDefault = comments.filter((comment) => /default Node/.test(comment));
    expect(aboutDefault.length).toBeGreaterThan(0);
    for (const comment of aboutDefault) expect(comment).toMatch(/not support/);
  });
});
