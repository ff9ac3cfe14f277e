/**
 * `dpfit` as a separate process for tests that need one (a node server, a process killed with
 * SIGKILL): `node --import tsx test/helpers/dpfit-process.ts ARGS...` runs the CLI from the sources.
 */
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
