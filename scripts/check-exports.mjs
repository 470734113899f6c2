// The published declarations and the runtime modules must export the same values: a name the .d.ts
// exports as a value (a class, function or constant) but the module lacks compiles in a user's code
// and fails when it runs. Checks every entry, ESM and CommonJS, after `npm run build`.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import ts from 'typescript';

const require = createRequire(import.meta.url);
const entries = [
  ['dist/index.d.ts', 'dist/index.js', 'dist/index.cjs'],
  ['dist/testing/index.d.ts', 'dist/testing/index.js', 'dist/testing/index.cjs'],
  ['dist/redis/index.d.ts', 'dist/redis/index.js', 'dist/redis/index.cjs'],
  ['dist/postgres/index.d.ts', 'dist/postgres/index.js', 'dist/postgres/index.cjs'],
  ['dist/stores/index.d.ts', 'dist/stores/index.js', 'dist/stores/index.cjs'],
];
const program = ts.createProgram(
  entries.map(([dts]) => dts),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true },
);
const checker = program.getTypeChecker();
let failures = 0;
for (const [dts, esm, cjs] of entries) {
  const source = program.getSourceFile(dts);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`cannot read ${dts}`);
  const values = checker
    .getExportsOfModule(module)
    .filter((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      // A type-only export (`export { type X }`) is no value, whatever X was declared as.
      const typeOnly = symbol.declarations?.some((d) => ts.isTypeOnlyImportOrExportDeclaration(d));
      return !typeOnly && (target.flags & ts.SymbolFlags.Value) !== 0;
    })
    .map((symbol) => symbol.name);
  const runtime = [
    ['ESM', new Set(Object.keys(await import(resolve(esm))))],
    ['CommonJS', new Set(Object.keys(require(resolve(cjs))))],
  ];
  for (const [kind, names] of runtime) {
    const missing = values.filter((name) => !names.has(name));
    if (missing.length > 0) {
      failures++;
      console.error(`${dts}: exported as values but missing from the ${kind} module: ${missing.join(', ')}`);
    }
  }
  console.log(`${dts}: ${values.length} value exports, all present at run time`);
}
process.exit(failures > 0 ? 1 : 0);
