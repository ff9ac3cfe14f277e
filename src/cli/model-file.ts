/**
 * Reading model files for `dpfit verify`, `evaluate` and `predict`: the file's JSON, the model
 * (linear or one-vs-rest) and the verification of its privacy claim (`learners/verification/verify-model.ts`).
 * A file that cannot be read, is not JSON or is not a well-formed dpfit model is a
 * `DataFormatError` (exit 3).
 */
import { readFileSync, statSync } from 'node:fs';
import { nodeKind } from '../data/node/files.js';
import { DataFormatError, InvalidParameterError } from '../errors.js';
import { parseModel, type LinearModel } from '../learners/models/model.js';
import { parseOneVsRestModel, type OneVsRestModel } from '../learners/composite/one-vs-rest.js';
import { verifyModel, type ModelVerification } from '../learners/verification/verify-model.js';

export type AnyModel = LinearModel | OneVsRestModel;

/** The largest model file read (a model is a few numbers per feature; this is far above any). */
const MAX_MODEL_BYTES = 256 * 1024 * 1024;

/** The parsed JSON of a model file; errors name `source` (e.g. "--model model.json"). */
export function readModelJson(path: string, source = path): unknown {
  let text: string;
  try {
    const info = statSync(path);
    if (info.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    if (!info.isFile()) throw new DataFormatError(source, `is ${nodeKind(info)}, not a model file`);
    if (info.size > MAX_MODEL_BYTES) throw new DataFormatError(source, `is ${info.size} bytes: larger than any dpfit model file (${MAX_MODEL_BYTES / (1024 * 1024)} MiB at most)`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof DataFormatError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new DataFormatError(source, code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a model file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : `cannot be read (${code ?? String(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataFormatError(source, `is not JSON (${(error as Error).message}): a dpfit model file is written by dpfit train --out`);
  }
}

/**
 * The coefficients of a federated model as a linear model: ridge (squared loss) on numeric targets,
 * or a ridge classifier when the nodes' labels were binary (-1/+1; predictions are the sign).
 */
function federatedCoefficients(json: Record<string, unknown>): LinearModel {
  const classifier = json.task === 'classification';
  const model = parseModel({ ...json, format: 'dpfit-linear-model/1', task: classifier ? 'regression' : json.task, privacy: undefined });
  return classifier ? { ...model, task: 'classification' } : model;
}

/** A model file read, parsed and its privacy claim verified; errors name the flag when given. */
export function loadModelFile(path: string, flag?: string): { model: AnyModel; verification: ModelVerification } {
  const source = flag === undefined ? path : `${flag} ${path}`;
  const json = readModelJson(path, source);
  // verifyModel checks the format and the shape (DataFormatError when malformed) before anything else.
  const verification = verifyModel(json, { source });
  try {
    const format = (json as { format?: unknown }).format;
    // A federated model's coefficients are a linear model's; its privacy block (one per node) was verified above.
    const model =
      format === 'dpfit-one-vs-rest-model/1'
        ? parseOneVsRestModel(json)
        : format === 'dpfit-federated-model/1'
          ? federatedCoefficients(json as Record<string, unknown>)
          : parseModel(json);
    return { model, verification };
  } catch (error) {
    if (error instanceof InvalidParameterError) throw new DataFormatError(source, `is not a valid dpfit model: ${error.message}`);
    throw error;
  }
}
