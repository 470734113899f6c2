/** One ```ts block of a markdown file. */
export interface CodeBlock {
  /** The line of the markdown file the code starts on. */
  line: number;
  code: string;
  /** The file the block says it is, on its first line (`// lib/partner.ts`), when it says so. */
  file: string | undefined;
}

/** Every ```ts block of a markdown file. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => {
    const code = match[1]!;
    return {
      line: markdown.slice(0, match.index).split('\n').length + 1,
      code,
      file: /^\/\/ ([\w./[\]-]+\.ts)\n/.exec(code)?.[1],
    };
  });
}
