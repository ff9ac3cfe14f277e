#!/usr/bin/env node
// Entry point of the `dpfit` command. The compiled CLI lives in dist/ (built by `npm ci` via the
// `prepare` script, or `npm run build`).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
