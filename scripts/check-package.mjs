// What the built package pulls in and weighs, from esbuild's metafiles (written by `npm run build`)
// and `npm pack`. Fails when the ES module build bundles any third-party code (every dependency is
// imported from node_modules), when the CommonJS build bundles a package that ships CommonJS of its
// own or contains an `import()` (Jest runs neither without a flag), when bundled code has no licence
// notice, when the build imports a package that package.json does not declare (it would be missing
// from a partner's install), when the README or a guide of docs/ is not in the tarball, or when the
// packed tarball exceeds its budget; prints each entry's size (the files its import loads at once,
// and those it loads on first use) and the packed size, the figures bench/README quotes.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The packed tarball's budget, in bytes: readable code and source maps that do not embed `src/`. */
const MAX_PACKED_BYTES = 1_000_000;
/** The longest line a built `.js` file may have: the output is for people to read in a stack trace. */
const MAX_LINE = 2_000;

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const declared = new Set([
  ...Object.keys(pkg.dependencies ?? {}),
  ...Object.keys(pkg.peerDependencies ?? {}),
]);
const builtins = new Set(builtinModules);
const packageOf = (specifier) => {
  const [scope = '', name = ''] = specifier.split('/');
  return scope.startsWith('@') ? `${scope}/${name}` : scope;
};
const failures = [];

const formats = {
  ESM: JSON.parse(readFileSync('dist/metafile-esm.json', 'utf8')),
  CJS: JSON.parse(readFileSync('dist/metafile-cjs.json', 'utf8')),
};

/** Whether a package has a CommonJS entry: a `require` condition, or no `"type": "module"`. */
function shipsCommonJs(name) {
  const manifest = JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8'));
  return manifest.type !== 'module' || JSON.stringify(manifest.exports ?? {}).includes('"require"');
}

const bundled = { ESM: new Set(), CJS: new Set() };
for (const [format, { inputs, outputs }] of Object.entries(formats)) {
  for (const input of Object.keys(inputs)) {
    const at = input.lastIndexOf('node_modules/');
    if (at >= 0) bundled[format].add(packageOf(input.slice(at + 'node_modules/'.length)));
  }
  for (const [file, output] of Object.entries(outputs)) {
    for (const { path, external } of output.imports) {
      if (!external || path.startsWith('node:') || builtins.has(path)) continue;
      if (!declared.has(packageOf(path)))
        failures.push(`${file} (${format}) imports ${path}, which package.json does not declare`);
    }
  }
}
for (const name of bundled.ESM)
  failures.push(`the ESM build bundles ${name}: import it from node_modules (tsup external) instead`);
for (const name of bundled.CJS) {
  if (shipsCommonJs(name))
    failures.push(
      `the CJS build bundles ${name}, which ships CommonJS: require it from node_modules instead`,
    );
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}
for (const file of filesUnder('dist', '.cjs')) {
  const text = readFileSync(file, 'utf8');
  const at = text.search(/\bimport\s*\(/);
  if (at >= 0) {
    const line = text.slice(0, at).split('\n').length;
    failures.push(`${file}:${line} has an import(), which Jest refuses in CommonJS without a flag`);
  }
}

const notices = existsSync('dist/THIRD_PARTY_LICENSES.md')
  ? readFileSync('dist/THIRD_PARTY_LICENSES.md', 'utf8')
  : '';
for (const name of new Set([...bundled.ESM, ...bundled.CJS])) {
  if (!notices.includes(`## ${name}@`))
    failures.push(`${name} is bundled but has no notice in dist/THIRD_PARTY_LICENSES.md`);
}
for (const format of ['ESM', 'CJS']) {
  const names = [...bundled[format]];
  console.log(`bundled third-party packages (${format}): ${names.length === 0 ? 'none' : names.join(', ')}`);
}

/** The chunks an entry loads: at once (static imports), and later (dynamic imports, transitively). */
function closure(outputs, entry) {
  const eager = new Set();
  const lazy = new Set();
  const visit = (file, set) => {
    if (set.has(file) || eager.has(file)) return;
    set.add(file);
    for (const { path, kind, external } of outputs[file]?.imports ?? []) {
      if (external) continue;
      visit(path, kind === 'dynamic-import' || set === lazy ? lazy : set);
    }
  };
  visit(entry, eager);
  for (const file of eager) lazy.delete(file);
  return { eager, lazy };
}

// kB as npm prints them (1000 bytes), so the packed size reads the same as `npm pack` says.
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const weigh = (files) => {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = readFileSync(file);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return `${kb(raw)} (${kb(gzip)} gzip)`;
};
console.log('\n| entry | format | loaded by its import | loaded on first use |');
console.log('| --- | --- | ---: | ---: |');
for (const entry of ['index', 'testing/index', 'redis/index', 'postgres/index', 'stores/index']) {
  for (const [format, { outputs }] of Object.entries(formats)) {
    const file = `dist/${entry}.${format === 'ESM' ? 'js' : 'cjs'}`;
    const { eager, lazy } = closure(outputs, file);
    const name = entry === 'index' ? '`.`' : `\`./${entry.replace('/index', '')}\``;
    console.log(`| ${name} | ${format} | ${weigh(eager)} | ${lazy.size ? weigh(lazy) : '—'} |`);
  }
}

const [packed] = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }),
);
const maps = packed.files
  .filter((file) => file.path.endsWith('.map'))
  .reduce((sum, file) => sum + file.size, 0);
const declarations = packed.files
  .filter((file) => /\.d\.c?ts$/.test(file.path))
  .reduce((sum, file) => sum + file.size, 0);
const parts = [...(maps > 0 ? [`source maps ${kb(maps)}`] : []), `declarations ${kb(declarations)}`];
console.log(
  `\npacked ${kb(packed.size)}, unpacked ${kb(packed.unpackedSize)} in ${packed.files.length} files ` +
    `(${parts.join(', ')})`,
);
for (const file of packed.files) {
  if (file.path.includes('metafile')) failures.push(`${file.path} is in the package`);
}
const shipped = new Set(packed.files.map((file) => file.path));
// Every path `exports` and `bin` name must be in the tarball, or an import of it fails.
const leaves = (value) =>
  typeof value === 'string' ? [value] : Object.values(value ?? {}).flatMap((inner) => leaves(inner));
const named = leaves(pkg.exports).filter((path) => path !== './package.json');
for (const path of [...named, ...Object.values(pkg.bin ?? {})]) {
  const file = path.replace(/^\.\//, '');
  if (!shipped.has(file)) failures.push(`${path}, named in package.json, is not in the packed tarball`);
}
// The README and the guides it links to ship, so that `--help` and the README can point at them
// under node_modules/partner-s2s-sdk/; the API reference (docs/api, built by `npm run docs`) does not.
const guides = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
if (guides.length === 0) failures.push('docs/ holds no guide (docs/*.md)');
for (const doc of ['README.md', ...guides]) {
  if (!shipped.has(doc)) failures.push(`${doc} is not in the packed tarball`);
}
for (const file of packed.files) {
  if (file.path.startsWith('docs/') && !guides.includes(file.path))
    failures.push(`${file.path} is in the package: only the guides docs/*.md ship`);
}
for (const file of packed.files) {
  if (!/\.c?js$/.test(file.path)) continue;
  const text = readFileSync(file.path, 'utf8');
  // The CommonJS build's list of exports is one line by construction.
  const lines = text.split('\n').filter((line) => !line.startsWith('exports.'));
  const longest = Math.max(0, ...lines.map((line) => line.length));
  if (longest > MAX_LINE)
    failures.push(`${file.path} has a line of ${longest} characters (at most ${MAX_LINE})`);
  const map = `${file.path}.map`;
  if (!shipped.has(map)) failures.push(`${file.path} ships without its source map`);
  else {
    const { sources, sourcesContent } = JSON.parse(readFileSync(map, 'utf8'));
    if (sourcesContent?.some((content) => content)) failures.push(`${map} embeds its sources`);
    // Each source resolves, from the map, to a file of this checkout: the SDK's own under src/.
    for (const source of sources) {
      const resolved = resolve(dirname(map), source);
      const own = resolved.startsWith(resolve('src') + sep) && resolved.endsWith('.ts');
      const inlined = resolved.includes(`${sep}node_modules${sep}`) || resolved === resolve(file.path);
      if (isAbsolute(source) || !(inlined || (own && existsSync(resolved))))
        failures.push(`${map} names ${source}, not a source under src/`);
    }
  }
}
if (packed.size > MAX_PACKED_BYTES)
  failures.push(`the packed tarball is ${packed.size} bytes, over its budget of ${MAX_PACKED_BYTES}`);

for (const failure of failures) console.error(failure);
process.exit(failures.length > 0 ? 1 : 0);
