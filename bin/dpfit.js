#!/usr/bin/env node
// Entry point of the `dpfit` command. The compiled CLI lives in dist/ (built by `npm ci` via the
// `prepare` script, or `npm run build`).
import { main } from '../dist/cli/main.js';

// A closed pipe (`dpfit ... | head`) ends the output quietly, as for any Unix tool.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
process.exitCode = await main(process.argv.slice(2));
