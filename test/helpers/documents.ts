import { readdirSync } from 'node:fs';

/**
 * The documents a partner reads: the README and the guides in docs/ (shipped in the package), paths
 * from the repository's root. What the docs tests check holds for each of them alike.
 */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
