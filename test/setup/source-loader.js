// Loaded with `node -r` by the processes the tests start from source (src/main.ts, src/worker.ts,
// the CLI): TypeScript compiled as it is loaded, by swc (as jest compiles it, .swcrc), without type
// checks. node:cluster forks inherit the flag, so every HTTP process of HTTP_PROCESSES loads the
// same way.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file node loads itself
require('ts-node').register({ transpileOnly: true, swc: true });
