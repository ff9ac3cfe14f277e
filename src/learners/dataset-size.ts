/**
 * Which n is public, said in every report (`privacy.datasetSize`).
 *
 * A released value may depend on the number of records n only where n is public:
 *
 *   - replace-one learners (dpgd, shuffled, output, output-sgd, rgm): n is public by the relation
 *     itself (a neighbour replaces a record, so it has the same count). The count is that of the
 *     records READ: a record dropped for a missing value is a zero row of the training set
 *     (`data/dropped-rows.ts`), so no released value moves when one record's value goes missing.
 *     A declared `datasetSize` must equal it (refused otherwise, saying nothing of the count: it is
 *     the same for both neighbours, so the refusal tells nothing about which one it is);
 *   - DP-SGD (add/remove-one): a neighbour has one record more or fewer, so n is NOT public by the
 *     relation; its event carries q = B/n. With a declared `datasetSize` nothing released depends
 *     on the data's count (`dp-sgd.ts` `dpSgdPublicSize`); without it the data's count is used
 *     and the report says that it is treated as public (Abadi et al. 2016; Opacus);
 *   - objective perturbation and AMP (add/remove-one): the objective is a SUM and no released
 *     value depends on n (`003` Sec. 2.2).
 *
 * Which case a learner is, is its registry entry's `datasetSize` (`registry.ts`).
 */
import { InvalidParameterError } from '../errors.js';
import { requireInteger } from '../validate.js';
import type { DatasetSizeReport, PrivacyReport } from './models/privacy-report.js';
import { learnerNamed } from './registry.js';

/**
 * The public n of a run of `method` (a library method name) on `records` rows (zero rows of
 * dropped records included), with an optional declared count; refuses a declared count a
 * replace-one learner's data disagree with (module comment).
 */
export function datasetSizeReport(method: string, records: number, declared: number | undefined): DatasetSizeReport {
  const kind = learnerNamed(method).datasetSize;
  const declaredCount = declared === undefined ? undefined : requireInteger('datasetSize', declared, 1);
  if (kind === 'unused') {
    return { source: 'unused', note: `no released value depends on n: ${method}'s objective is a sum, so the number of records stays private` };
  }
  if (kind === 'records') {
    if (declaredCount !== undefined && declaredCount !== records) {
      throw new InvalidParameterError('datasetSize', declaredCount, 'the number of records the data hold (rows dropped for a missing value included); the data hold another number');
    }
    return {
      value: records,
      source: declaredCount === undefined ? 'records' : 'declared',
      note: 'public under replace-one neighbours (a neighbour replaces a record); records dropped for a missing value count, as zero rows that contribute nothing',
    };
  }
  // 'declaredOrRecords' (DP-SGD).
  if (declaredCount !== undefined) {
    return { value: declaredCount, source: 'declared', note: 'declared without the data: q = batchSize / n and the epochs depend on it, not on the data\'s own count' };
  }
  return {
    value: records,
    source: 'records',
    note: 'the number of records read, treated as public as in Abadi et al. 2016 and Opacus (a neighbour under add/remove-one has one more or fewer): it sets q = batchSize / n in the event; declare datasetSize (--dataset-size) to keep the count private',
  };
}

/** The report with the public n stated (`datasetSize`). */
export function withDatasetSize<R extends PrivacyReport>(report: R, size: DatasetSizeReport): R {
  return Object.freeze({ ...report, datasetSize: size });
}
