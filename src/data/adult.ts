/**
 * UCI Adult (Census Income; Becker & Kohavi 1996, CC BY 4.0): where the files live, how to check
 * them, and the ready-made public schema `adult.schema.json` that `dpfit data fetch adult` writes.
 *
 * The schema reads nothing from the data. Its category lists are copied from the data set's
 * documentation (`adult.names`, the attribute list at its end); its numeric bounds come from the
 * documentation too where it states them — the extraction conditions AAGE>16, AFNLWGT>1, HRSWK>0
 * give the lower bounds of age, fnlwgt and hours-per-week — and otherwise from public knowledge
 * of the census files, stated in each column's `note`. The label `>50K` is the positive class; the
 * test file writes its labels with a trailing dot (`>50K.`), so both spellings are declared.
 *
 * Numeric encodings (`schema/numeric-encoding.ts`), fixed from public knowledge before any accuracy was
 * measured: age in the Census Bureau's five-year age groups (cut points 20, 25, ..., 75: 13 bins);
 * hours-per-week in bands from labour statistics (under 20; 20-34, part time, the BLS defines
 * part-time work as under 35 hours; 35-39; exactly 40, the standard full-time week; 41-49; 50-59;
 * 60 and more: 7 bins); capital-gain and capital-loss as log(1 + amount) plus dollar bands on a
 * 1-3-10 log scale (zero vs positive at 1, then 1,000, 3,000, 10,000, 30,000 and the top-code
 * 99,999 alone: 7 bins each); fnlwgt and education-num keep their scaled value. None of these
 * cut points was read from the data: cut points at the data's quantiles (as LIBSVM's a9a has)
 * would be a statistic of the private data and would leak.
 *
 * Encoded width: age 13 bins + fnlwgt 1 + education-num 1 + capital-gain and capital-loss 1 + 7
 * each + hours-per-week 7 bins = 38 numeric features; 8 categorical columns with 8, 16, 7, 14, 6,
 * 5, 2 and 41 categories, each plus an "other" slot (unknown `?` values go there) = 99 + 8 = 107
 * features; rows are then L2-normalised and a bias column of 1 appended (`003` Sec. 5): 38 + 107 +
 * 1 = 146 features, public
 * row-norm bound sqrt(1 + 1) = sqrt(2), the clipping norm C = sqrt(2) of `003` Sec. 5 (the
 * logistic loss's gradient norm is at most the row norm).
 *
 * Checksums (`ADULT_FILES`): the SHA-256 digests and sizes are those of the original UCI files.
 * We obtained them from a local copy of the UCI files after undoing its one
 * change (a header line added on top of each file; for `adult.test` it replaces the original
 * first line `|1x3 Cross validator`), and checked them against independent published values: the
 * sizes 3,974,305 and 2,003,153 bytes of UCI's directory listing and the MD5 digests
 * 5d7c39d7b8804f071cdd1f2a7c460872 (adult.data), 35238206dfdf7f1fe215bbb874adecdc (adult.test) and
 * 1a7cdb3ff7a1b709968b1c7a11def63e (adult.names) that many public loaders pin, and the same SHA-256
 * digests pinned by other projects for the files downloaded from UCI.
 *
 * Browser-safe (no Node imports): downloading and writing files is in `node/fetch.ts`.
 */
import { parseSchema } from './schema/parse.js';
import type { Schema } from './schema/types.js';

export interface RemoteFile {
  /** File name in the install directory. */
  readonly name: string;
  /** The official address. */
  readonly url: string;
  /** Size in bytes. */
  readonly size: number;
  /** SHA-256 of the content, lower-case hex. */
  readonly sha256: string;
  /** A file that --from may lack (documentation). */
  readonly optional?: boolean;
}

/** The official UCI Machine Learning Repository directory of the data set. */
export const ADULT_BASE_URL = 'https://archive.ics.uci.edu/ml/machine-learning-databases/adult/';

/** The files `dpfit data fetch adult` installs, with their sizes and SHA-256 digests (see the module comment). */
export const ADULT_FILES: readonly RemoteFile[] = [
  { name: 'adult.data', url: `${ADULT_BASE_URL}adult.data`, size: 3_974_305, sha256: '5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d' },
  { name: 'adult.test', url: `${ADULT_BASE_URL}adult.test`, size: 2_003_153, sha256: 'a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05' },
  { name: 'adult.names', url: `${ADULT_BASE_URL}adult.names`, size: 5_229, sha256: 'c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a', optional: true },
];

/**
 * Rows and the share of the positive class documented in adult.names (train=32561, test=16281;
 * P(>50K) = 23.93% over both), and the number of features of the shipped schema.
 */
export const ADULT_DOCUMENTED = { trainRows: 32_561, testRows: 16_281, featureCount: 146, positiveRate: 0.2393 } as const;

/** The first line of the original adult.test. */
export const ADULT_TEST_FIRST_LINE = '|1x3 Cross validator';

const WORKCLASS = ['Private', 'Self-emp-not-inc', 'Self-emp-inc', 'Federal-gov', 'Local-gov', 'State-gov', 'Without-pay', 'Never-worked'];
const EDUCATION = ['Bachelors', 'Some-college', '11th', 'HS-grad', 'Prof-school', 'Assoc-acdm', 'Assoc-voc', '9th', '7th-8th', '12th', 'Masters', '1st-4th', '10th', 'Doctorate', '5th-6th', 'Preschool'];
const MARITAL_STATUS = ['Married-civ-spouse', 'Divorced', 'Never-married', 'Separated', 'Widowed', 'Married-spouse-absent', 'Married-AF-spouse'];
const OCCUPATION = [
  'Tech-support', 'Craft-repair', 'Other-service', 'Sales', 'Exec-managerial', 'Prof-specialty', 'Handlers-cleaners',
  'Machine-op-inspct', 'Adm-clerical', 'Farming-fishing', 'Transport-moving', 'Priv-house-serv', 'Protective-serv', 'Armed-Forces',
];
const RELATIONSHIP = ['Wife', 'Own-child', 'Husband', 'Not-in-family', 'Other-relative', 'Unmarried'];
const RACE = ['White', 'Asian-Pac-Islander', 'Amer-Indian-Eskimo', 'Other', 'Black'];
const SEX = ['Female', 'Male'];
const NATIVE_COUNTRY = [
  'United-States', 'Cambodia', 'England', 'Puerto-Rico', 'Canada', 'Germany', 'Outlying-US(Guam-USVI-etc)', 'India', 'Japan', 'Greece',
  'South', 'China', 'Cuba', 'Iran', 'Honduras', 'Philippines', 'Italy', 'Poland', 'Jamaica', 'Vietnam', 'Mexico', 'Portugal', 'Ireland',
  'France', 'Dominican-Republic', 'Laos', 'Ecuador', 'Taiwan', 'Haiti', 'Columbia', 'Hungary', 'Guatemala', 'Nicaragua', 'Scotland',
  'Thailand', 'Yugoslavia', 'El-Salvador', 'Trinadad&Tobago', 'Peru', 'Hong', 'Holand-Netherlands',
];

/** Census five-year age groups (public; not read from the data). */
const AGE_CUTS = [20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75];
/** Weekly-hours bands from labour statistics (public; not read from the data). */
const HOURS_CUTS = [20, 35, 40, 41, 50, 60];
/** Dollar bands: zero vs positive, then a 1-3-10 log scale, and the top-code 99999 alone (public; not read from the data). */
const DOLLAR_CUTS = [1, 1_000, 3_000, 10_000, 30_000, 99_999];
const DOLLAR_NOTE = 'bins: zero vs positive, then dollar bands on a 1-3-10 log scale (1,000, 3,000, 10,000, 30,000) and the top-code 99999 alone';

const CATEGORY_NOTE = 'categories from adult.names; unknown values ("?") go to the other slot';

/** The JSON of `adult.schema.json`. */
export const ADULT_SCHEMA_JSON = {
  $comment:
    'Public schema of UCI Adult written by dpfit. Nothing here was read from the data: categories are the lists of adult.names, bounds come from its extraction conditions or from public knowledge of the 1994 Current Population Survey files, bin cut points are round numbers from public conventions (census age groups, labour-statistics hour bands, dollar bands on a log scale), see each note.',
  version: 1,
  name: 'adult',
  description: 'UCI Adult (Census Income), Becker & Kohavi 1996, CC BY 4.0. Files adult.data (train) and adult.test (test) as distributed by UCI.',
  provenance: 'declared',
  csv: { header: false, delimiter: ',', comment: '|', missing: ['?', ''] },
  columns: [
    {
      name: 'age',
      type: 'numeric',
      lower: 17,
      upper: 90,
      bins: AGE_CUTS,
      note: 'lower: extraction condition AAGE>16 (adult.names); upper: the CPS public-use files top-code age at 90; bins: the Census Bureau five-year age groups (20-24, ..., 70-74, 75+)',
    },
    { name: 'workclass', type: 'categorical', categories: WORKCLASS, missing: 'other', note: CATEGORY_NOTE },
    {
      name: 'fnlwgt',
      type: 'numeric',
      lower: 1,
      upper: 2_000_000,
      note: 'CPS final weight (people represented by the record); lower: extraction condition AFNLWGT>1 (adult.names); upper: a generous declared bound, larger values are clipped',
    },
    { name: 'education', type: 'categorical', categories: EDUCATION, missing: 'other', note: CATEGORY_NOTE },
    { name: 'education-num', type: 'numeric', lower: 1, upper: 16, note: 'the ordinal code of the 16 education levels listed in adult.names' },
    { name: 'marital-status', type: 'categorical', categories: MARITAL_STATUS, missing: 'other', note: CATEGORY_NOTE },
    { name: 'occupation', type: 'categorical', categories: OCCUPATION, missing: 'other', note: CATEGORY_NOTE },
    { name: 'relationship', type: 'categorical', categories: RELATIONSHIP, missing: 'other', note: CATEGORY_NOTE },
    { name: 'race', type: 'categorical', categories: RACE, missing: 'other', note: CATEGORY_NOTE },
    { name: 'sex', type: 'categorical', categories: SEX, missing: 'other', note: CATEGORY_NOTE },
    {
      name: 'capital-gain',
      type: 'numeric',
      lower: 0,
      upper: 99_999,
      transform: 'log1p',
      bins: DOLLAR_CUTS,
      encode: 'valueAndBins',
      note: `a non-negative amount in dollars; the CPS files top-code it at 99999 (a five-digit field); log1p for a heavy-tailed amount; ${DOLLAR_NOTE}`,
    },
    {
      name: 'capital-loss',
      type: 'numeric',
      lower: 0,
      upper: 99_999,
      transform: 'log1p',
      bins: DOLLAR_CUTS,
      encode: 'valueAndBins',
      note: `a non-negative amount in dollars, the same five-digit field as capital-gain; log1p for a heavy-tailed amount; ${DOLLAR_NOTE}`,
    },
    {
      name: 'hours-per-week',
      type: 'numeric',
      lower: 1,
      upper: 99,
      bins: HOURS_CUTS,
      note: 'lower: extraction condition HRSWK>0 (adult.names); upper: a two-digit CPS field (top-coded at 99); bins: under 20, 20-34 (part time: the BLS defines part-time work as under 35 hours), 35-39, exactly 40 (the standard full-time week), 41-49, 50-59, 60+',
    },
    { name: 'native-country', type: 'categorical', categories: NATIVE_COUNTRY, missing: 'other', note: CATEGORY_NOTE },
    {
      name: 'income',
      type: 'label',
      positive: ['>50K', '>50K.'],
      negative: ['<=50K', '<=50K.'],
      note: 'adult.names: ">50K, <=50K."; adult.test writes each label with a trailing dot',
    },
  ],
  rowTransform: 'normalize',
  intercept: true,
};

/**
 * The public schema of UCI Adult (validated): 146 features (binned age and hours, log1p and bands
 * for capital gain and loss, one-hot categories), unit-norm rows then a bias column of 1 (`003`
 * Sec. 5: row-norm bound sqrt(2)), label 1 for `>50K`.
 */
export function adultSchema(): Schema {
  return parseSchema(ADULT_SCHEMA_JSON, 'adult.schema.json');
}

function firstLineEnd(bytes: Uint8Array): number {
  const i = bytes.indexOf(10);
  return i < 0 ? bytes.length : i + 1;
}

function startsWithText(bytes: Uint8Array, text: string): boolean {
  if (bytes.length < text.length) return false;
  for (let k = 0; k < text.length; k++) if (bytes[k] !== text.charCodeAt(k)) return false;
  return true;
}

/** Whether the first line looks like a header added by someone (first field "age", not a number). */
function hasAddedHeader(bytes: Uint8Array): boolean {
  const end = Math.min(firstLineEnd(bytes), 400);
  const first = new TextDecoder().decode(bytes.subarray(0, end)).split(',')[0].trim().toLowerCase();
  return first === 'age';
}

/**
 * Undoes the known edits of local copies so that a file can be checked against the official
 * checksum: a header line added on top is removed, and for adult.test the original first line
 * `|1x3 Cross validator` is restored if the header replaced it. Files in the original form are
 * returned unchanged. `changes` says what was done (empty when nothing).
 */
export function normalizeAdultCopy(name: string, bytes: Uint8Array): { bytes: Uint8Array; changes: string[] } {
  if (!hasAddedHeader(bytes)) return { bytes, changes: [] };
  const rest = bytes.subarray(firstLineEnd(bytes));
  if (name !== 'adult.test' || startsWithText(rest, ADULT_TEST_FIRST_LINE)) return { bytes: rest, changes: ['removed an added header line'] };
  const prefix = new TextEncoder().encode(`${ADULT_TEST_FIRST_LINE}\n`);
  const out = new Uint8Array(prefix.length + rest.length);
  out.set(prefix, 0);
  out.set(rest, prefix.length);
  return { bytes: out, changes: [`replaced an added header line by the original first line '${ADULT_TEST_FIRST_LINE}'`] };
}
