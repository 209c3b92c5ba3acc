#!/usr/bin/env node
// The `latch` command (`node_modules/.bin/latch`, docs/production.md): the CLI of
// server/src/cli.ts run under tsx, as `npm run latch --` runs it, without npm in between, so
// stdout holds only what Latch writes (with LATCH_LOG_FORMAT=json, one JSON object a line).
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli.ts')
main(process.argv.slice(2))
