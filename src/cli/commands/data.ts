/**
 * `dpfit data inspect`, `dpfit data schema` and `dpfit data fetch`: look at a data file (this
 * reads private data, and says so), suggest a schema to start from (with a loud warning on
 * stderr), and install a public data set with its ready-made schema.
 */
import { dpfitCommand } from '../invocation.js';
import type { Command } from 'commander';
import { ADULT_DOCUMENTED } from '../../data/adult.js';
import { maxRowNorm } from '../../data/dataset.js';
import { FETCHERS } from '../../data/node/fetch.js';
import { writeOutputFiles } from '../../data/node/atomic-write.js';
import { checkOutputPaths } from '../output-files.js';
import { detectFormat, loadDataset, readLibsvmFile, readSchemaFile, readTable, type ReadTableOptions } from '../../data/node/read.js';
import { schemaFeatureNames } from '../../data/schema/bounds.js';
import { isSuggestedSchema, schemaToJson } from '../../data/schema/parse.js';
import { schemaCsvOptions } from '../../data/schema/read-options.js';
import type { Schema } from '../../data/schema/types.js';
import { INSPECT_WARNING, SUGGESTION_WARNING, inspectTable, suggestSchema } from '../../data/schema/suggest.js';
import { InvalidParameterError } from '../../errors.js';
import { formatNumber, parseIntegerFlag, printResult, toJson, type CliIo } from '../io.js';

interface ReadFlags {
  format?: string;
  engine?: string;
  threads?: number;
  header: boolean;
  delimiter?: string;
  comment?: string;
  json?: boolean;
}

function addReadOptions(command: Command): Command {
  return command
    .option('--format <F>', "'csv', 'parquet' or 'libsvm' (default: from the file name)")
    .option('--engine <E>', "CSV reader: 'builtin' (exact line numbers in errors) or 'duckdb' (large files)", 'builtin')
    .option('--threads <N>', 'DuckDB threads (Parquet, --engine duckdb)', parseIntegerFlag('--threads'))
    .option('--no-header', 'the CSV file has no header line (columns are named column1, column2, ...)')
    .option('--delimiter <C>', 'CSV delimiter (one character; default ,)')
    .option('--comment <C>', 'skip CSV lines starting with this character');
}

/** Reader options from the flags, on top of a schema's dialect when there is one. */
function readOptions(flags: ReadFlags, command: Command, schema?: Schema, path?: string): ReadTableOptions {
  const base: ReadTableOptions = schema !== undefined ? schemaCsvOptions(schema, path) : {};
  const headerGiven = command.getOptionValueSource('header') === 'cli';
  return {
    ...base,
    ...(flags.format !== undefined ? { format: flags.format as ReadTableOptions['format'] } : {}),
    engine: flags.engine as ReadTableOptions['engine'],
    ...(flags.threads !== undefined ? { threads: requireThreads(flags.threads) } : {}),
    ...(headerGiven || schema === undefined ? { header: flags.header } : {}),
    ...(flags.delimiter !== undefined ? { delimiter: flags.delimiter } : {}),
    ...(flags.comment !== undefined ? { comment: flags.comment } : {}),
  };
}

function requireThreads(threads: number): number {
  if (!(threads >= 1 && threads <= 1024)) throw new InvalidParameterError('--threads', threads, 'in [1, 1024]');
  return threads;
}

function warnIfSuggested(io: CliIo, schema: Schema, path: string): void {
  if (isSuggestedSchema(schema)) io.stderr(`dpfit: ${path}: ${SUGGESTION_WARNING}\n`);
}

export function registerData(program: Command, io: CliIo): void {
  const data = program.command('data').description('read, inspect and fetch tabular data (schemas, readers, public data sets)');

  addReadOptions(
    data
      .command('inspect')
      .description('summarise a data file: rows, columns, types, missing counts (READS PRIVATE DATA)')
      .argument('<file>', 'a CSV, Parquet or LIBSVM file')
      .option('--schema <S>', 'a schema JSON file: also report the encoding (features, norm bound, clipped and "other" values)'),
  )
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
This command reads the private data and prints statistics of it (counts, categories). Look at
them yourself; do not publish them or choose preprocessing from them.

Examples:
  $ dpfit data inspect data/adult/adult.data --schema data/adult/adult.schema.json
  $ dpfit data inspect measurements.parquet --json`,
    )
    .action(async (file: string, options: ReadFlags & { schema?: string }, command: Command) => {
      const schema = options.schema !== undefined ? await readSchemaFile(options.schema) : undefined;
      if (schema !== undefined && options.schema !== undefined) warnIfSuggested(io, schema, options.schema);
      const format = await detectFormat(file, options.format);
      if (format === 'libsvm') {
        if (schema !== undefined) throw new InvalidParameterError('--schema', options.schema, 'not used with LIBSVM files (already numeric)');
        const dataset = await readLibsvmFile(file);
        const labels = new Map<number, number>();
        for (const y of dataset.y) labels.set(y, (labels.get(y) ?? 0) + 1);
        const result = {
          source: file,
          format,
          readsPrivateData: true,
          warning: INSPECT_WARNING,
          rows: dataset.n,
          features: dataset.d,
          maxRowNorm: maxRowNorm(dataset),
          labels: labels.size <= 20 ? Object.fromEntries([...labels.entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v])) : { distinct: labels.size },
        };
        printResult(io, Boolean(options.json), result, () =>
          [`${file} (LIBSVM) — READS PRIVATE DATA`, `  rows ${result.rows}, features ${result.features}, largest row norm ${formatNumber(result.maxRowNorm)}`, `  labels ${JSON.stringify(result.labels)}`, `  ${INSPECT_WARNING}`].join('\n'),
        );
        return;
      }
      const table = await readTable(file, readOptions(options, command, schema, file));
      const summary = inspectTable(table, schema);
      const result = { ...summary, format };
      printResult(io, Boolean(options.json), result, () => {
        const lines = [`${file} (${format}) — READS PRIVATE DATA`, `  rows ${summary.rows}, columns ${summary.columns.length}`];
        for (const c of summary.columns) lines.push(`  ${c.name.padEnd(24)} ${c.type.padEnd(12)} missing ${c.missing}${c.distinct !== undefined ? `, ${c.distinct} distinct` : ''}`);
        if (summary.schema !== undefined) {
          const s = summary.schema;
          lines.push(
            `  with the schema: ${s.featureCount} features, rows ${s.rows} (dropped ${s.droppedRows}), row transform ${s.rowTransform}, public row-norm bound ${formatNumber(s.rowNormBound)}`,
          );
          if (s.positives !== undefined) lines.push(`  positives ${s.positives} (${formatNumber(100 * (s.positiveRate ?? 0), 4)}%)`);
          const clipped = Object.entries(s.clipped).filter(([, v]) => v > 0);
          const other = Object.entries(s.other).filter(([, v]) => v > 0);
          if (clipped.length > 0) lines.push(`  clipped to the bounds: ${clipped.map(([k, v]) => `${k} ${v}`).join(', ')}`);
          if (other.length > 0) lines.push(`  sent to "other": ${other.map(([k, v]) => `${k} ${v}`).join(', ')}`);
        }
        lines.push(`  ${INSPECT_WARNING}`);
        return lines.join('\n');
      });
    });

  addReadOptions(
    data
      .command('schema')
      .description('suggest a schema from a data file (READS PRIVATE DATA: for exploration only)')
      .argument('<file>', 'a CSV or Parquet file')
      .option('--label <COL>', 'the label column (default: the last column)')
      .option('--positive <V>', 'the positive label value (default: the rarer of two values)')
      .option('--max-categories <N>', 'text columns with more distinct values are ignored', parseIntegerFlag('--max-categories'), 100)
      .option('--out <FILE>', 'write the schema to FILE instead of stdout'),
  )
    .option('--json', 'print one JSON object (the schema; this is the default output)')
    .addHelpText(
      'after',
      `
Prints a schema (JSON) on stdout and a warning on stderr. The suggestion is read from the
private data: its bounds are observed ranges and its categories observed values. Use it as a
template only: replace them by public knowledge and set "provenance" to "declared". Every dpfit
command that is given a schema still marked "suggested-from-private-data" repeats the warning.

Example:
  $ dpfit data schema data.csv --label income --positive '>50K' --out schema.json`,
    )
    .action(async (file: string, options: ReadFlags & { label?: string; positive?: string; maxCategories: number; out?: string }, command: Command) => {
      if (!(options.maxCategories >= 1)) throw new InvalidParameterError('--max-categories', options.maxCategories, 'an integer >= 1');
      const [out] = checkOutputPaths([options.out === undefined ? undefined : { flag: '--out', path: options.out }], [{ flag: '<file>', path: file }]);
      const table = await readTable(file, readOptions(options, command));
      const { schema, warning } = suggestSchema(table, { label: options.label, positive: options.positive, maxCategories: options.maxCategories });
      const text = `${toJson(schemaToJson(schema))}\n`;
      if (out !== undefined) writeOutputFiles([{ output: out, data: text }]);
      io.stderr(`dpfit: ${warning}\n`);
      if (out === undefined) io.stdout(text);
      else if (options.json) io.stdout(`${toJson({ out: options.out, schema: schemaToJson(schema) })}\n`);
      else io.stdout(`wrote the suggested schema to ${options.out}\n`);
    });

  data
    .command('fetch')
    .description('download a public data set, check its checksums and write it with a public schema')
    .argument('<name>', `data set: ${Object.keys(FETCHERS).join(', ')}`)
    .option('--dir <D>', 'install directory (default data/<name>)')
    .option('--from <DIR>', 'install from a local copy instead of downloading (checked against the same checksums)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
adult: UCI Adult (Census Income), from https://archive.ics.uci.edu/ml/machine-learning-databases/adult/
(adult.data, adult.test, adult.names; CC BY 4.0) and adult.schema.json, its public schema:
14 attributes, bounds and categories from the documentation, label >50K; ${ADULT_DOCUMENTED.featureCount} features.
A local copy with a header line added on top of each file is accepted (the line is removed
before the checksum is compared).

Examples:
  $ dpfit data fetch adult
  $ dpfit data fetch adult --from /path/to/uci-adult --dir data/adult --json`,
    )
    .action(async (name: string, options: { dir?: string; from?: string; json?: boolean }) => {
      const fetcher = FETCHERS[name];
      if (fetcher === undefined) throw new InvalidParameterError('the data set <name>', name, `one of ${Object.keys(FETCHERS).join(', ')}`);
      const dir = options.dir ?? `data/${name}`;
      // The install directory is checked before anything is downloaded: it (or its nearest existing parent) must be a writable directory.
      checkOutputPaths([{ flag: options.dir === undefined ? '--dir (default)' : '--dir', path: dir, kind: 'directory' }], [options.from === undefined ? undefined : { flag: '--from', path: options.from }]);
      const report = await fetcher({ dir, from: options.from });
      // Load both parts with the shipped schema: the user sees what a learner will get.
      const schema = await readSchemaFile(report.schema);
      const parts: Record<string, { file: string; rows: number; positives: number; positiveRate: number; maxRowNorm: number }> = {};
      for (const [part, file] of Object.entries(report.parts)) {
        const prepared = await loadDataset(file, schema);
        let positives = 0;
        for (const y of prepared.dataset.y) if (y > 0) positives++;
        parts[part] = { file, rows: prepared.dataset.n, positives, positiveRate: positives / prepared.dataset.n, maxRowNorm: maxRowNorm(prepared.dataset) };
      }
      const result = { ...report, featureCount: schemaFeatureNames(schema).length, rowTransform: schema.rowTransform, ...parts };
      printResult(io, Boolean(options.json), result, () =>
        [
          `${name}: installed in ${report.dir} (${report.license})`,
          ...report.files.map((f) => `  ${f.name.padEnd(12)} ${f.status}${f.bytes > 0 ? `, ${f.bytes} bytes, SHA-256 ok` : ''}${f.changes.length > 0 ? ` (${f.changes.join('; ')})` : ''}`),
          `  ${report.schema} ${report.schemaWritten ? 'written' : 'kept (already there)'}: ${result.featureCount} features, row transform ${schema.rowTransform}`,
          ...(report.schemaDiffersFromShipped ? [`  warning: ${report.schema} differs from the schema this dpfit ships (older version or edited); delete it and fetch again to get the current one`] : []),
          ...Object.entries(parts).map(([part, p]) => `  ${part.padEnd(5)} ${p.rows} rows, ${formatNumber(100 * p.positiveRate, 4)}% positive, largest row norm ${formatNumber(p.maxRowNorm)}`),
          '',
          `Next: ${dpfitCommand()} data inspect ${report.parts.train ?? Object.values(report.parts)[0]} --schema ${report.schema}`,
        ].join('\n'),
      );
    });
}
