/**
 * `dpfit plot RUNS.json`: the charts of an experiment's runs (`report/runs.ts`, written by
 * `experiments/adult-epsilon-sweep.ts --json`): test accuracy against epsilon, mean +- std over
 * seeds per method with error bars, and the training loss per step (median over seeds within the
 * min/max band, one panel per epsilon). Drawn by vega-lite (`report/vega-chart.ts`): SVG, or PNG
 * when the file name ends in .png. Output paths are checked before anything is read and written
 * all or nothing (`cli/output-files.ts`).
 */
import type { Command } from 'commander';
import { readFileSync, statSync } from 'node:fs';
import { writeOutputFiles, type OutputContent } from '../../data/node/atomic-write.js';
import { checkOutputPaths } from '../output-files.js';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { lossBands, parseRuns, summariseAccuracy, RUNS_FORMAT } from '../../report/runs.js';
import { errorBarChart, lineBandChart, renderVegaLite } from '../../report/vega-chart.js';
import { formatNumber, printResult, type CliIo } from '../io.js';

/** The largest runs file read (50 runs with 50 loss points each is ~100 KB). */
const MAX_RUNS_BYTES = 64 * 1024 * 1024;

/** The parsed JSON of a runs file; a missing, unreadable, oversized or non-JSON file is a DataFormatError (exit 3). */
function readRunsJson(path: string): unknown {
  let text: string;
  try {
    const info = statSync(path);
    if (!info.isFile()) throw new DataFormatError(path, info.isDirectory() ? 'is a directory, not a runs file' : 'is not a regular file (a device, FIFO or socket)');
    if (info.size > MAX_RUNS_BYTES) throw new DataFormatError(path, `is ${info.size} bytes: larger than a runs file may be (${MAX_RUNS_BYTES / (1024 * 1024)} MiB)`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof DataFormatError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new DataFormatError(path, code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : `cannot be read (${code ?? String(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataFormatError(path, `is not JSON (${(error as Error).message})`);
  }
}

interface PlotFlags {
  accuracyOut?: string;
  lossOut?: string;
  json?: boolean;
}

const isPng = (path: string) => path.toLowerCase().endsWith('.png');

export function registerPlot(program: Command, io: CliIo): void {
  program
    .command('plot')
    .description("charts of an experiment's runs: accuracy vs epsilon (mean +- std over seeds) and training loss per step, as SVG or PNG")
    .argument('<RUNS.json>', `the runs (${RUNS_FORMAT}), e.g. from experiments/adult-epsilon-sweep.ts --json FILE`)
    .option('--accuracy-out <FILE>', 'write test accuracy against epsilon, per method, mean +- std over seeds as error bars (SVG, or PNG for .png)')
    .option('--loss-out <FILE>', 'write the training loss per step, one panel per epsilon, median over seeds in its min/max band (SVG, or PNG for .png)')
    .option('--json', 'print one JSON object: {accuracyOut, lossOut, accuracy: [{method, epsilon, n, mean, std}]}')
    .addHelpText(
      'after',
      `
The runs file: {"format": "${RUNS_FORMAT}", "runs": [{"method", "epsilon", "seed", "accuracy" (in [0, 1]),
"trainingLoss": [{"step", "loss"}] (optional)}], "baseline": {"method", "accuracy"} (optional, drawn as a
dashed line)}. The std has divisor n (the experiments' tables use it). Without --accuracy-out and
--loss-out, the accuracy summary is printed (as JSON with --json). These numbers were computed from
the experiment's data: diagnostics for whoever ran it, not a release.

Example:
  $ node --import tsx experiments/adult-epsilon-sweep.ts data/adult --json sweep.json
  $ dpfit plot sweep.json --accuracy-out accuracy.svg --loss-out loss.png`,
    )
    .action(async (input: string, flags: PlotFlags) => {
      const outputs = checkOutputPaths(
        [flags.accuracyOut === undefined ? undefined : { flag: '--accuracy-out', path: flags.accuracyOut }, flags.lossOut === undefined ? undefined : { flag: '--loss-out', path: flags.lossOut }],
        [{ flag: '<RUNS.json>', path: input }],
      );
      const runs = parseRuns(readRunsJson(input), input);
      const accuracy = summariseAccuracy(runs.runs);
      const files: OutputContent[] = [];
      const subtitle = [runs.experiment, runs.delta === undefined ? undefined : `delta = ${runs.delta < 1e-3 ? runs.delta.toExponential() : formatNumber(runs.delta)}`, `${Math.max(...accuracy.map((a) => a.n))} seeds, mean +- std`].filter((s) => s !== undefined).join(', ');
      for (const output of outputs) {
        let spec: object;
        if (output.flag === '--accuracy-out') {
          const positive = accuracy.every((a) => a.epsilon > 0 && Number.isFinite(a.epsilon));
          spec = errorBarChart(
            accuracy.filter((a) => Number.isFinite(a.epsilon)).map((a) => ({ series: a.method, x: a.epsilon, mean: 100 * a.mean, std: 100 * a.std })),
            {
              title: 'Test accuracy against epsilon',
              subtitle,
              xTitle: 'epsilon',
              yTitle: 'test accuracy (%)',
              logX: positive,
              ...(runs.baseline === undefined ? {} : { reference: { label: runs.baseline.method, value: 100 * runs.baseline.accuracy } }),
            },
          );
        } else {
          const bands = lossBands(runs.runs);
          if (bands.length === 0) throw new InvalidParameterError('--loss-out', flags.lossOut, 'given only for runs with a trainingLoss', `${input} has none`);
          // Panels on rows of three at a size read in the README (five in one row were 1630 x 334),
          // the y axis zoomed on the curves (they differ by little), the band's edges drawn.
          const seeds = Math.max(...accuracy.map((a) => a.n));
          spec = lineBandChart(bands, {
            title: 'Training loss per step, one panel per epsilon',
            subtitle: `line: median over ${seeds} seed${seeds === 1 ? '' : 's'}; band: their min to max${runs.delta === undefined ? '' : `; delta = ${runs.delta < 1e-3 ? runs.delta.toExponential() : formatNumber(runs.delta)}`}`,
            xTitle: 'step',
            yTitle: 'training loss',
            columns: 3,
            yZero: false,
            width: 280,
            height: 190,
          });
        }
        const chart = await renderVegaLite(spec);
        files.push({ output, data: isPng(output.path) ? chart.png : chart.svg });
      }
      writeOutputFiles(files);
      const result = { accuracyOut: flags.accuracyOut ?? null, lossOut: flags.lossOut ?? null, accuracy };
      printResult(io, Boolean(flags.json), result, () => {
        const written = outputs.map((o) => `wrote ${o.path}`);
        const table = ['method'.padEnd(24) + 'epsilon'.padEnd(10) + 'runs'.padEnd(6) + 'accuracy (mean +- std)', ...accuracy.map((a) => `${a.method.padEnd(24)}${formatNumber(a.epsilon).padEnd(10)}${String(a.n).padEnd(6)}${(100 * a.mean).toFixed(2)} +- ${(100 * a.std).toFixed(2)} %`)];
        return [...written, ...(written.length > 0 ? [] : table)].join('\n');
      });
    });
}
