/**
 * Fixtures for the CLI tests: a small private-looking CSV (age, hours, a yes/no label drawn from a
 * logistic model of both) with its public schema, in a fresh temp dir, and an in-process runner
 * of `dpfit` that captures stdout and stderr.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { sampleGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';

/** The public schema of the people CSV (declared, not read from it). */
export const PEOPLE_SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 0, upper: 80, scale: 'symmetric' },
    { name: 'hours', type: 'numeric', lower: 0, upper: 80, scale: 'symmetric' },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
};

/** `rows` seeded rows written to people.csv in a new temp dir (prefix names the dir), with people.schema.json. */
export function peopleFixture(prefix: string, rows: number, seed: number): { dir: string; data: string; schema: string; lines: string[] } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const rng = seededRng(seed);
  const lines = ['age,hours,label'];
  for (let i = 0; i < rows; i++) {
    const age = Math.round(40 + 12 * sampleGaussian(rng));
    const hours = Math.round(40 + 10 * sampleGaussian(rng));
    const z = (age - 40) / 12 + (hours - 40) / 10;
    lines.push(`${age},${hours},${rng.nextDouble() < 1 / (1 + Math.exp(-2 * z)) ? 'yes' : 'no'}`);
  }
  const data = join(dir, 'people.csv');
  writeFileSync(data, `${lines.join('\n')}\n`);
  const schema = join(dir, 'people.schema.json');
  writeFileSync(schema, JSON.stringify(PEOPLE_SCHEMA));
  return { dir, data, schema, lines };
}

/** Runs `dpfit argv...` in-process; returns the exit status and what it printed. */
export async function runCli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}
