/**
 * The SDK as users get it: the built package (npm run bench builds it first), typed from the
 * sources so that type-checking needs no build.
 */
type Sdk = typeof import('../src/index.js');

const built = new URL('../dist/index.js', import.meta.url).href;
export const sdk: Sdk = await import(built);
