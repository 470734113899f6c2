#!/usr/bin/env node
import { main } from './main.js';

/*
 * The executable: main.ts stays importable (tests call `main` directly), this file only runs it
 * with the process's streams and environment.
 */

void main(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stdin: process.stdin,
}).then((code) => {
  // exitCode, not exit(): pending output is flushed and the event loop drains first.
  process.exitCode = code;
});
