/**
 * The package's entries (docs/architecture.md "Package entries"), checked on the
 * sources: the browser-safe subpaths import no Node module and nothing Node-only of dpfit's (their
 * whole import graph, type-only and dynamic imports included), every name the root exported
 * before the split is still exported from the subpath the map below names, the root holds exactly
 * the newcomer's names, each also exported by a subpath as the same object, and package.json's
 * `exports`/`typesVersions` list exactly src/entries. test/package/install.test.ts checks the
 * packed package the same way a consumer meets it (require, types without @types/node, a browser
 * bundle).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { importChain, importGraph } from '../../scripts/import-graph.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The subpaths a browser bundle may import (`dpfit/<name>` is src/entries/<name>.ts). */
const BROWSER_SAFE = ['accounting', 'mechanisms', 'math', 'data', 'learners'] as const;
const SUBPATHS = [...BROWSER_SAFE, 'node', 'audit'] as const;
type Subpath = (typeof SUBPATHS)[number];

/** Modules only Node can run: files, processes, HTTP, worker threads, the CLI, the charts. */
const NODE_ONLY = [/^src\/data\/node\//, /^src\/cli\//, /^src\/federated\//, /^src\/report\//, /^src\/audit\//, /^src\/worker-threads\.ts$/, /^src\/learners\/glm\/parallel\//, /^src\/learners\/sql\//];

const ERRORS = ['BudgetExceededError', 'CalibrationError', 'DataFormatError', 'DpfitError', 'InvalidParameterError', 'NumericalError', 'UnknownOptionError', 'UnsupportedEventError'];

/**
 * Where each name the root exported before the split into subpaths (217 values, 109 types) lives
 * now. The error classes are exported by every entry, the root included.
 */
const MOVED: Record<Subpath, { values: string[]; types: string[] }> = {
  accounting: {
    values: 'advancedComposition ampEvent analyticGaussianNoiseMultiplier calibrateDpsgd calibrateGaussian calibrateNoiseMultiplier calibrateObjectivePerturbation calibrateRelativeGaussian classicalGaussianNoiseMultiplier composeEvent DEFAULT_ORDERS dpsgdEvent eventToJson exactGaussianCompositionNoiseMultiplier gaussianCompositionEpsilon gaussianDelta gaussianEvent gaussianLogDelta laplaceEvent maxSteps neighboringRelationOf NO_OP_EVENT NON_PRIVATE_EVENT objectivePerturbationEvent parseEvent PldAccountant pldDelta pldEpsilon poissonSampledEvent pureEpsilon randomizedResponseEvent RdpAccountant rdpDelta rdpEpsilon rdpToEpsilon rdpToEpsilonImproved rdpToEpsilonMironov relativeGaussianCorollary1 relativeGaussianEpsilon relativeGaussianEpsilonFloor relativeGaussianEvent relativeGaussianMaxOrder relativeGaussianRdp repeatAndSelectEvent sampledWithoutReplacementEvent selectAmpParameters selectObjectivePerturbationParameters selfComposeEvent shuffledSgdConjectureEvent totalVariation'.split(' '),
    types: 'ComposeEvent DpEvent DpEventKind GaussianCalibration GaussianCalibrationMethod GaussianCalibrationOptions GaussianEvent LaplaceEvent NeighboringRelation NonPrivateEvent NoOpEvent ObjectivePerturbationEvent PldAccountantOptions PldDiscretization PldGuarantee PoissonSampledEvent PrivacyGuarantee RandomizedResponseEvent RdpConversion RelativeGaussianCalibration RelativeGaussianEpsilon RelativeGaussianEvent RelativeGaussianParams RepeatAndSelectEvent SampledWithoutReplacementEvent SelfComposeEvent ShuffledSgdConjectureEvent'.split(' '),
  },
  mechanisms: {
    values: 'addGaussianGridNoise addLaplaceGridNoise addRelativeGaussianGridNoise defaultRng fillDiscreteGaussian fillGaussian gaussianMechanism GRID_RESOLUTION laplaceMechanism planGaussianGrid planLaplaceGrid planRelativeGaussianGrid poissonSubsampleIndices poissonSubsampleMask randomizedResponse randomizedResponseEpsilon randomizedResponseNoiseParameter randomPermutation relativeGaussianMechanism sampleBernoulli sampleBinomial sampleDiscreteGaussian sampleDiscreteGaussianVariance sampleDiscreteLaplace sampleExponential sampleGaussian sampleLaplace samplePoisson secureRng seededRng shuffleInPlace uniformInt'.split(' '),
    types: 'GaussianGridPlan GaussianMechanismOptions GaussianMechanismResult GridPlanOptions LaplaceGridPlan LaplaceMechanismOptions LaplaceMechanismResult QueryValue RandomizedResponseOptions RandomizedResponseResult RelativeGaussianGrid RelativeGaussianOptions RelativeGaussianResult Rng'.split(' '),
  },
  math: {
    values: 'brentMinimize brentRoot expandBracket integrate lbfgs log1mExp log1pExp logAddExp logBinomial logGamma logSubExp logSumExp newton normalCdf normalLogCdf normalLogSf normalQuantile normalQuantileOfLog normalSf'.split(' '),
    types: [],
  },
  data: {
    values: 'addIntercept ADULT_DOCUMENTED ADULT_FILES ADULT_SCHEMA_JSON adultSchema applySchema checkRowNormBound clipRows clipRowsMahalanobis concatRows createDataset CsvParser findColumn gaussianFeatures INSPECT_WARNING inspectTable isSuggestedSchema maxRowNorm normalizeAdultCopy normalizeRows numericTableToDataset parseCsv parseLibsvm parseSchema rowNorm rowView scaleRows SCHEMA_VERSION schemaCsvOptions schemaEncodedNormBound schemaFeatureNames schemaLabelBound schemaRowNormBound schemaToJson selectRows SUGGESTED_PROVENANCE SUGGESTION_WARNING suggestSchema syntheticDataset trainTestSplit twoPartySplit'.split(' '),
    types: 'CategoricalColumn CategoricalColumnSpec ColumnSpec ColumnSummary CsvColumnType CsvDialectSpec CsvOptions Dataset GaussianFeaturesOptions IgnoredColumnSpec LabelColumnSpec LibsvmOptions MissingPolicy NumericColumn NumericColumnSpec NumericScale PreparedData PrivateDiagnostics RawColumn RawTable RemoteFile RowTransform Schema SuggestSchemaOptions SyntheticDatasetOptions TableSummary TrainTestSplitOptions TwoPartySplitKind TwoPartySplitOptions'.split(' '),
  },
  learners: {
    values: 'accuracy calibrateCompositeNoise certifiedMinimum DEFAULT_DELTA describeVerification evaluate evaluateOneVsRest gaussianFeatureRho gradientRunEvent gradientRunNoise gridSearchNotPrivate huberLoss logisticLoss logLoss meanSquaredError minimizePerturbedObjective nonPrivateReport parseModel parseOneVsRestModel parsePrivacyReport poissonMeanForGrid predict predictClasses predictMargins PrivateLinearRegression PrivateLogisticRegression proposeTestRelease ptrStatistic publicRandomness rgmRidgeSensitivity rocAuc rSquared schemaClipNorm smoothedHingeLoss squaredLoss train TRAIN_METHODS trainAmp trainDpGd trainDpSgd trainGradientMethod trainObjectivePerturbation trainOneVsRest trainOutputPerturbation trainOutputPerturbationSgd trainRgmGd trainShuffledSgd tuneGradientMethodHonestly tuneHonestly verifyModel weakerGuarantee withConditions'.split(' '),
    types: 'AmpOptions CertifiedMinimum CertifiedMinimumOptions DpGdOptions DpSgdOptions EstimatorOptions GlmLoss GradientMethod GradientMethodOptions GuaranteeCondition GuaranteeSummary LinearModel Metrics ModelVerification ObjectivePerturbationOptions OneVsRestModel OneVsRestOptions OutputPerturbationOptions OutputPerturbationSgdOptions PrivacyReport RgmGdOptions RgmGdResult SchemaBoundedData TrainData TrainMethod TrainOptions TrainOutcome TrainResult TuneGradientMethodOptions VerifyModelOptions'.split(' '),
  },
  audit: { values: [], types: [] },
  node: {
    values: 'convertCsvToParquet detectFormat downloadVerified fetchAdult FETCHERS FetchFailedError installFiles loadDataset readCsvFile readCsvWithDuckDb readLibsvmFile readParquetFile readSchemaFile readTable sha256Hex verifyBytes'.split(' '),
    types: 'CsvEngine DataFormat DuckDbOptions FetchAdultOptions FetchFunction FetchReport InstalledFile InstallOptions ReadTableOptions'.split(' '),
  },
};

/** Names added to a subpath since the split (not in the old root's counts above). */
const ADDED: Partial<Record<Subpath, { values: string[]; types: string[] }>> = {
  accounting: {
    values: ['kiferObjectivePerturbationDelta', 'kiferObjectivePerturbationEpsilon', 'nonUniformSampledEvent', 'nonUniformSampledRdp', 'nonUniformSampledGaussianRdpCurve'],
    types: ['KiferObjectivePerturbationParams', 'NonUniformSampledEvent'],
  },
  learners: {
    values: ['plannedTrainingRelease'],
    types: ['PlannedRelease', 'PublicTrainingShape'],
  },
  // The audit (issue 26): what `dpfit audit` runs, shared by the library and the CLI.
  audit: {
    values: 'auditLearner auditLearnerParallel oneRunAudit planOneRunAudit auditTradeOffCurves auditTradeOffFigure epsilonDeltaTradeOff gaussianMuOfEpsilon clopperPearsonLower clopperPearsonUpper epsilonLowerBound gaussianDpEpsilonLower gaussianShiftMuLower gaussianTradeOff splitThresholdBound perStepBound composedEpsilonLower tradeOffMinorant oneRunEpsilonLower oneRunPValue'.split(' '),
    types: 'AuditMethod AuditOptions AuditResult AuditStatistic ThreatModel OneRunOptions OneRunResult AuditTradeOffCurves TradeOffCurve TradeOffCurveOptions TradeOffTestPoint AuditTradeOffFigure GaussianShiftBound SplitThresholdBound PerStepBound TradeOffPoint'.split(' '),
  },
};

/** The root: what a newcomer needs first (docs/architecture.md, "Package entries"). */
const ROOT_VALUES = [
  ...ERRORS,
  'adultSchema', 'parseSchema', 'trainTestSplit', 'loadDataset', 'readSchemaFile', 'defaultRng',
  'train', 'TRAIN_METHODS', 'PrivateLinearRegression', 'PrivateLogisticRegression',
  'evaluate', 'parseModel', 'predict', 'describeVerification', 'verifyModel',
];
const ROOT_TYPES = [
  'Dataset', 'PreparedData', 'Schema', 'Rng', 'SchemaBoundedData', 'TrainData', 'TrainMethod', 'TrainOptions', 'TrainOutcome',
  'EstimatorOptions', 'LinearModel', 'Metrics', 'PrivacyReport', 'GuaranteeSummary', 'ModelVerification', 'VerifyModelOptions',
];

const entryFile = (subpath: Subpath | '.') => join(ROOT, subpath === '.' ? 'src/index.ts' : `src/entries/${subpath}.ts`);

/** The names each entry exports, split into values and type-only names, as the compiler sees them. */
function entryExports(): Map<Subpath | '.', { values: Set<string>; types: Set<string> }> {
  const entries = ['.', ...SUBPATHS] as const;
  const program = ts.createProgram(entries.map(entryFile), { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: ['node'], noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const result = new Map<Subpath | '.', { values: Set<string>; types: Set<string> }>();
  for (const entry of entries) {
    const source = program.getSourceFile(entryFile(entry));
    assert.ok(source, entryFile(entry));
    const module = checker.getSymbolAtLocation(source);
    assert.ok(module, `${entry} is a module`);
    const values = new Set<string>();
    const types = new Set<string>();
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).add(symbol.name);
    }
    result.set(entry, { values, types });
  }
  return result;
}

describe('package entries', () => {
  for (const subpath of BROWSER_SAFE) {
    it(`dpfit/${subpath} is browser-safe: its import graph holds no node: module, nothing Node-only of dpfit's, no package but @stdlib's`, () => {
      const graph = importGraph(entryFile(subpath));
      assert.ok(graph.modules.length > 1);
      for (const module of graph.modules) {
        assert.ok(!NODE_ONLY.some((pattern) => pattern.test(module)), `dpfit/${subpath} reaches a Node-only module: ${importChain(graph, module)}`);
      }
      for (const [specifier, importers] of graph.external) {
        assert.ok(!specifier.startsWith('node:'), `dpfit/${subpath} imports ${specifier}: ${importers.map((m) => importChain(graph, m)).join('; ')}`);
        assert.match(specifier, /^@stdlib\//, `dpfit/${subpath} imports the package ${specifier} (${importers.join(', ')}): a browser bundle would need it`);
      }
    });
  }

  it('the root loads no CLI, HTTP, federated, chart or worker-thread module (require("dpfit") stays small)', () => {
    const graph = importGraph(entryFile('.'));
    for (const module of graph.modules) {
      assert.ok(!/^src\/(cli|federated|report|audit)\/|^src\/worker-threads\.ts$|parallel-clipped-sum|^src\/learners\/sql\//.test(module), `the root reaches ${importChain(graph, module)}`);
    }
  });

  it("every name the root exported before the split is exported by the subpath the map names; the error classes by every entry", () => {
    const exported = entryExports();
    let values = 0;
    let types = 0;
    for (const subpath of SUBPATHS) {
      const has = exported.get(subpath);
      assert.ok(has);
      for (const name of MOVED[subpath].values) assert.ok(has.values.has(name), `dpfit/${subpath} exports the value ${name}`);
      for (const name of MOVED[subpath].types) assert.ok(has.types.has(name) || has.values.has(name), `dpfit/${subpath} exports the type ${name}`);
      for (const name of ERRORS) assert.ok(has.values.has(name), `dpfit/${subpath} exports ${name}`);
      values += MOVED[subpath].values.length;
      types += MOVED[subpath].types.length;
    }
    // The old root's counts: 217 values (7 of them the errors), 109 types;
    // UnknownOptionError (strict options) is the one error class added since.
    assert.equal(values + ERRORS.filter((name) => name !== 'UnknownOptionError').length, 217);
    assert.equal(types, 109);
    const all = SUBPATHS.flatMap((s) => [...MOVED[s].values, ...MOVED[s].types]);
    assert.equal(new Set(all).size, all.length, 'each name has one home in the map');
  });

  it('every name added since the split is exported by the subpath the map names, and has one home', () => {
    const exported = entryExports();
    for (const [subpath, names] of Object.entries(ADDED) as [Subpath, { values: string[]; types: string[] }][]) {
      const has = exported.get(subpath);
      assert.ok(has);
      for (const name of names.values) assert.ok(has.values.has(name), `dpfit/${subpath} exports the value ${name}`);
      for (const name of names.types) assert.ok(has.types.has(name) || has.values.has(name), `dpfit/${subpath} exports the type ${name}`);
    }
    const old = SUBPATHS.flatMap((s) => [...MOVED[s].values, ...MOVED[s].types]);
    const added = Object.values(ADDED).flatMap((n) => [...n.values, ...n.types]);
    assert.ok(added.every((name) => !old.includes(name)), 'an added name is not also in the old map');
  });

  it("dpfit/audit exports every audit function `dpfit audit` calls (the library and the CLI share them), each name in no other entry", () => {
    const exported = entryExports();
    const audit = exported.get('audit');
    assert.ok(audit);
    const source = readFileSync(join(ROOT, 'src/cli/commands/audit.ts'), 'utf8');
    // Static and dynamic imports of the audit's modules and of the figure: the names the command uses.
    const used = [
      ...[...source.matchAll(/import \{([^}]*)\} from '(?:\.\.\/\.\.\/audit\/[\w-]+|\.\.\/audit-figure)\.js'/g)].flatMap((m) => m[1].split(',')),
      ...[...source.matchAll(/const \{([^}]*)\} = await import\('\.\.\/\.\.\/audit\/[\w-]+\.js'\)/g)].flatMap((m) => m[1].split(',')),
      ...[...source.matchAll(/\{ (planOneRunAudit|oneRunAudit) \}/g)].map((m) => m[1]),
    ]
      .map((n) => n.trim())
      .filter((n) => n.length > 0 && !n.startsWith('type ') && !/^[A-Z_]+$/.test(n));
    for (const name of ['auditLearnerParallel', 'oneRunAudit', 'planOneRunAudit', 'auditTradeOffFigure']) assert.ok(used.includes(name), `dpfit audit uses ${name} (${used.join(', ')})`);
    for (const name of used) assert.ok(audit.values.has(name), `dpfit/audit exports ${name}, which dpfit audit calls`);
    for (const name of [...audit.values, ...audit.types].filter((n) => !ERRORS.includes(n))) {
      for (const [entry, names] of exported) if (entry !== 'audit') assert.ok(!names.values.has(name) && !names.types.has(name), `${name} has one home: dpfit/audit, not ${entry}`);
    }
  });

  it('the root exports exactly the newcomer names, each also exported by a subpath as the same object', async () => {
    const exported = entryExports().get('.');
    assert.ok(exported);
    assert.deepEqual([...exported.values].sort(), [...ROOT_VALUES].sort());
    assert.deepEqual([...exported.types].sort(), [...ROOT_TYPES].sort());
    const root = (await import('../../src/index.js')) as Record<string, unknown>;
    const subpaths = await Promise.all(SUBPATHS.map(async (s) => [s, (await import(`../../src/entries/${s}.js`)) as Record<string, unknown>] as const));
    for (const name of ROOT_VALUES) {
      const homes = subpaths.filter(([, module]) => name in module);
      assert.ok(homes.length > 0, `${name} is in the root only`);
      for (const [subpath, module] of homes) assert.equal(module[name], root[name], `dpfit/${subpath}'s ${name} is the root's`);
    }
    for (const name of ROOT_TYPES) assert.ok(SUBPATHS.some((s) => MOVED[s].types.includes(name)), `the type ${name} is in the root only`);
  });

  it("the snippets of the README and of docs/ import each name from an entry that exports it", () => {
    const exported = entryExports();
    const importsOf = (file: string) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^import \{([^}]*)\} from '(dpfit(?:\/[a-z]+)?)';/gm)];
    const readmeImports = importsOf('README.md');
    assert.ok(readmeImports.length >= 5, `the README's imports: ${readmeImports.length}`);
    const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const docsImports = docs.flatMap(importsOf);
    // The snippets that left the README for docs/ (install, methods, accounting, data sources).
    assert.ok(docsImports.length >= 8, `docs/'s imports: ${docsImports.length}`);
    for (const [line, names, specifier] of [...readmeImports, ...docsImports]) {
      const entry = (specifier === 'dpfit' ? '.' : specifier.slice('dpfit/'.length)) as Subpath | '.';
      const has = exported.get(entry);
      assert.ok(has, `${line}: no entry ${specifier}`);
      for (const name of names.split(',').map((n) => n.trim().replace(/^type\s+/, '')).filter((n) => n.length > 0)) {
        assert.ok(has.values.has(name) || has.types.has(name), `${line}: ${specifier} does not export ${name}`);
      }
    }
    const readmeSpecifiers = new Set(readmeImports.map(([, , specifier]) => specifier));
    for (const specifier of ['dpfit', 'dpfit/accounting', 'dpfit/mechanisms']) assert.ok(readmeSpecifiers.has(specifier), `the README imports from ${specifier}`);
  });

  it("package.json's exports and typesVersions name src/index.ts and each file of src/entries, with types first", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
      typesVersions: Record<string, Record<string, string[]>>;
      main: string;
      types: string;
    };
    const files = readdirSync(join(ROOT, 'src/entries')).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, '')).sort();
    assert.deepEqual(files, [...SUBPATHS].sort());
    const expected: Record<string, unknown> = { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' };
    for (const name of files) expected[`./${name}`] = { types: `./dist/entries/${name}.d.ts`, default: `./dist/entries/${name}.js` };
    assert.deepEqual(pkg.exports, expected);
    // "types" must come before "default": conditions match in object order.
    for (const [key, value] of Object.entries(pkg.exports)) if (typeof value === 'object') assert.deepEqual(Object.keys(value), ['types', 'default'], key);
    assert.deepEqual(pkg.typesVersions, { '*': Object.fromEntries(files.map((name) => [name, [`dist/entries/${name}.d.ts`]])) });
    assert.equal(pkg.main, 'dist/index.js');
    assert.equal(pkg.types, 'dist/index.d.ts');
  });
});
