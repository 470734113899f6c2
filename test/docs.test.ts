import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** Every export of an entry, with its doc comment and whether it shows an example. */
function exportsOf(entry: string) {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const module = checker.getSymbolAtLocation(source)!;
  return checker.getExportsOfModule(module).map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declaration = symbol.declarations?.[0];
    const docs = ts.displayPartsToString(symbol.getDocumentationComment(checker));
    const tags = symbol.getJsDocTags(checker).map((tag) => tag.name);
    const callable =
      !!declaration &&
      (ts.isFunctionDeclaration(declaration) || ts.isClassDeclaration(declaration)) &&
      !/Error$/.test(exported.name);
    return { name: exported.name, docs, hasExample: tags.includes('example'), callable };
  });
}

describe('public surface documentation', () => {
  for (const entry of ['src/index.ts', 'src/testing/index.ts', 'src/redis/index.ts']) {
    it(`every export of ${entry} has a doc comment, and every function and class an example`, () => {
      const missing = exportsOf(entry)
        .filter((item) => item.docs.trim() === '' || (item.callable && !item.hasExample))
        .map((item) => item.name);
      expect(missing).toEqual([]);
    });
  }
});
