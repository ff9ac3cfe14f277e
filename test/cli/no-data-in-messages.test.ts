/**
 * No line the CLI prints carries a value of the data (docs/threat-model.md, "Messages"). The bad
 * files of `../helpers/marked-data.ts` (every private value a unique marker) go through `dpfit
 * train` (text and --json, in memory and out of core), `evaluate`, `predict`, `data inspect` and
 * `data schema`; no stdout, stderr or error line holds a marker. `data inspect` and `data schema`
 * print statistics and a suggested schema of the data by design (they say READS PRIVATE DATA):
 * there only their errors and stderr are held to the rule. Seeded; a few seconds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFECTS, leaks, markedCase, writeCase } from '../helpers/marked-data.js';
import { runCli } from '../helpers/people.js';

test('train, evaluate, predict and data commands on bad files: no output line holds a value of the data (seeded)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-no-data-cli-'));
  try {
    // A model trained on a clean file, to evaluate and predict with.
    const clean = writeCase(dir, 'clean', markedCase(5, 'none'));
    const model = join(dir, 'model.json');
    const trained = await runCli('train', '--data', clean.data, '--schema', clean.schema, '--epsilon', '1', '--steps', '5', '--out', model);
    assert.equal(trained.code, 0, trained.stderr);
    let failures = 0;
    let runs = 0;
    for (let seed = 1; seed <= 2; seed++) {
      for (const defect of DEFECTS) {
        const c = markedCase(500 * seed + DEFECTS.indexOf(defect), defect);
        const name = `${defect}-${seed}`;
        const { data, schema } = writeCase(dir, name, c);
        const out = join(dir, `${name}.model.json`);
        const commands: { argv: string[]; printsData?: boolean }[] = [
          { argv: ['train', '--data', data, '--schema', schema, '--epsilon', '1', '--steps', '5', '--out', out] },
          { argv: ['train', '--data', data, '--schema', schema, '--epsilon', '1', '--steps', '5', '--method', seed === 1 ? 'output' : 'rgm', '--json'] },
          { argv: ['evaluate', '--model', model, '--data', data, '--schema', schema] },
          { argv: ['predict', '--model', model, '--data', data, '--schema', schema, ...(seed === 2 ? ['--json'] : [])] },
          { argv: ['data', 'inspect', data, '--schema', schema], printsData: true },
          { argv: ['data', 'schema', data, '--label', 'label'], printsData: true },
        ];
        // Out of core through DuckDB for the defects its reader meets (each run starts a DuckDB).
        if (seed === 1 && ['headerless', 'badNumber', 'nonFiniteText', 'raggedLong', 'badEncoding', 'badLabel'].includes(defect)) {
          commands.push({ argv: ['train', '--data', data, '--schema', schema, '--epsilon', '1', '--steps', '3', '--max-memory', '64MB'] });
        }
        for (const { argv, printsData } of commands) {
          const result = await runCli(...argv);
          runs++;
          if (result.code !== 0) failures++;
          assert.notEqual(result.code, 1, `${name}: dpfit ${argv.join(' ')}: internal error ${result.stderr}`);
          const shown = printsData && result.code === 0 ? result.stderr : `${result.stdout}\n${result.stderr}`;
          const found = leaks(shown, c);
          assert.deepEqual(found, [], `${name}: dpfit ${argv.slice(0, 2).join(' ')} ... printed values of the data ${JSON.stringify(found)}:\n${shown.slice(0, 800)}`);
        }
      }
    }
    assert.ok(failures >= runs / 3, `${failures} of ${runs} runs failed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
