import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS } from './helpers/documents.js';

/*
 * The README and the guides link to one another and to the repository's files: every relative
 * link must lead somewhere, on GitHub and in the package alike, and every guide must be reachable
 * from the README.
 */

/** The markdown outside fenced code blocks, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a document's headings make, a repeated one numbered as GitHub numbers it. */
function anchors(path: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of prose(readFileSync(path, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Every inline link of a document: `[text](target)`, images included. */
function links(path: string): string[] {
  return [...prose(readFileSync(path, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe('links between the README and the guides', () => {
  it.each(DOCUMENTS)('every relative link of %s resolves, its anchor too', (document) => {
    const broken: string[] = [];
    for (const target of links(document)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? document : normalize(join(dirname(document), decodeURI(path)));
      if (file.startsWith('..') || !existsSync(file)) {
        broken.push(`${target}: no ${file}`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchors(file).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${file}`);
    }
    expect(broken).toEqual([]);
  });

  it('the README links to every guide in docs/', () => {
    const linked = new Set(links('README.md').map((target) => target.split('#')[0]));
    const guides = DOCUMENTS.filter((document) => document.startsWith('docs/'));
    expect(guides.length).toBeGreaterThanOrEqual(10);
    expect(guides.filter((guide) => !linked.has(guide))).toEqual([]);
  });

  it('the guides link back to the README or to one another, never to a page outside the package', () => {
    for (const guide of DOCUMENTS.filter((document) => document.startsWith('docs/'))) {
      const markdown = links(guide).filter((target) => /\.md(#|$)/.test(target) && !/^[a-z]+:/i.test(target));
      for (const target of markdown) {
        const file = normalize(join(dirname(guide), target.split('#')[0]!));
        expect(DOCUMENTS, `${guide} links to ${target}`).toContain(file);
      }
    }
  });
});
