/**
 * The packed package as a consumer meets it. dpfit is built and packed as `npm pack`
 * would publish it (scripts/pack.ts: a staged copy, the working tree untouched), and the tarball
 * is installed into an empty project offline (`installPacked`: `npm ci --offline` with a lockfile
 * pinning dpfit's dependencies to the versions of its own package-lock.json, whose tarballs
 * `npm ci` left in npm's cache; no network). Then:
 *
 *   - `require('dpfit')` and `require('dpfit/<subpath>')` work on Node >= 20.19 (require(esm): no
 *     top-level await anywhere in the graph they load), silently, and give the objects `import()`
 *     gives;
 *   - the browser-safe subpaths' published types, and the root's, compile in a consumer without
 *     @types/node (`"types": []`, `skipLibCheck: false`, lib ES2022 without DOM) under NodeNext,
 *     Bundler and Node10 resolution (the last through `typesVersions`), and none of the files
 *     tsc loads is Node's; `dpfit/node` compiles with @types/node;
 *   - esbuild bundles each browser-safe subpath from the installed package for the browser (it
 *     fails on a Node built-in), the bundle's inputs are dpfit's dist and @stdlib only, and in
 *     headless Chromium `dpfit/accounting`'s bundle computes for a few events the epsilon that the
 *     installed CLI (`dpfit epsilon --event ... --json`) prints, by RDP and by PLD.
 *
 * The install skips, saying so, only when npm's cache lacks a dependency (ENOTCACHED); the browser
 * part skips where /usr/bin/chromium is absent, as test/web/calculator-browser.test.ts does.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, type Browser } from '../../scripts/calculator-browser.js';
import { installPacked, packDpfit } from '../../scripts/pack.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const BROWSER_SAFE = ['accounting', 'mechanisms', 'math', 'data', 'learners'];
const SUBPATHS = [...BROWSER_SAFE, 'node', 'audit'];

const [major, minor] = process.versions.node.split('.').map(Number);
const requireEsm = major > 20 || (major === 20 && minor >= 19);

let work: string | undefined;
let packed: readonly string[] = [];
let consumer = '';
/** Why the package could not be installed here, if it could not (then every test skips). */
let unavailable: string | undefined;

function run(command: string, argv: string[], cwd = consumer): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, argv, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function skipped(t: TestContext): boolean {
  if (unavailable !== undefined) t.skip(unavailable);
  return unavailable !== undefined;
}

describe('the packed package, installed into an empty project', () => {
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'dpfit-package-'));
    const { tarball, files } = await packDpfit(work);
    packed = files;
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    const install = installPacked(tarball, consumer);
    if (install.status !== 0) {
      if (/ENOTCACHED/.test(install.stderr)) unavailable = `npm's cache lacks a dependency of dpfit and the test does not use the network: run npm ci first (${install.stderr.split('\n').find((line) => line.includes('request to')) ?? install.stderr.trim()})`;
      else assert.fail(`npm ci of the tarball failed:\n${install.stderr}`);
    }
  });

  after(() => {
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it("the tarball holds every file package.json's exports, typesVersions, main, types and bin name, and the calculator", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>>; typesVersions: Record<string, Record<string, string[]>>; main: string; types: string; bin: Record<string, string> };
    const named = [
      ...Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target))),
      ...Object.values(pkg.typesVersions['*']).flat(),
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      'dist/web/index.html',
    ];
    for (const file of named) assert.ok(packed.includes(file.replace(/^\.\//, '')), `${file} is in the tarball`);
  });

  it("require('dpfit') and every subpath load through require(esm), silently, and are what import() gives", { skip: requireEsm ? false : `Node ${process.versions.node} has no require(esm) (20.19+)` }, (t) => {
    if (skipped(t)) return;
    // A CommonJS script (the consumer's package.json has no "type"): what `node -e "require('dpfit')"` does.
    const cjs = `
      const names = {};
      for (const id of ${JSON.stringify(['dpfit', ...SUBPATHS.map((s) => `dpfit/${s}`)])}) names[id] = Object.keys(require(id)).sort();
      const { rdpEpsilon, gaussianEvent } = require('dpfit/accounting');
      const { train, DpfitError } = require('dpfit');
      let deep;
      try { require('dpfit/dist/index.js'); } catch (error) { deep = error.code; }
      process.stdout.write(JSON.stringify({ names, epsilon: rdpEpsilon(gaussianEvent(1.1), 1e-5).epsilon, train: typeof train,
        sameErrors: DpfitError === require('dpfit/node').DpfitError, version: require('dpfit/package.json').version, deep }));`;
    const required = run(process.execPath, ['-e', cjs]);
    assert.equal(required.status, 0, required.stderr);
    assert.equal(required.stderr, '', 'no warning (require(esm) is silent on 20.19+)');
    const fromRequire = JSON.parse(required.stdout) as { names: Record<string, string[]>; epsilon: number; train: string; sameErrors: boolean; version: string; deep: string };
    assert.equal(fromRequire.train, 'function');
    assert.ok(fromRequire.sameErrors);
    assert.equal(fromRequire.version, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    assert.equal(fromRequire.deep, 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'only the declared entries are reachable');
    assert.ok(Math.abs(fromRequire.epsilon - 4.239473153260128) <= 1e-12, `epsilon ${fromRequire.epsilon}`); // dpfit epsilon --event '{"kind":"gaussian","noiseMultiplier":1.1}'
    // The same names through import(), and require gives the very namespace import() gives.
    const esm = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url + '/');
      const names = {};
      let same = true;
      for (const id of ${JSON.stringify(['dpfit', ...SUBPATHS.map((s) => `dpfit/${s}`)])}) {
        const namespace = await import(id);
        names[id] = Object.keys(namespace).sort();
        same &&= require(id) === namespace;
      }
      process.stdout.write(JSON.stringify({ names, same }));`;
    const imported = run(process.execPath, ['--input-type=module', '-e', esm]);
    assert.equal(imported.status, 0, imported.stderr);
    const fromImport = JSON.parse(imported.stdout) as { names: Record<string, string[]>; same: boolean };
    assert.deepEqual(fromRequire.names, fromImport.names);
    assert.ok(fromImport.same, 'require(esm) returns the module namespace');
    assert.ok(fromImport.names.dpfit.length < 40, `the root stays small: ${fromImport.names.dpfit.length} values`);
  });

  it('the types of the root and the browser-safe subpaths compile without @types/node (skipLibCheck off) under NodeNext, Bundler and Node10 resolution', (t) => {
    if (skipped(t)) return;
    writeFileSync(join(consumer, 'browser.ts'), `
      import { rdpEpsilon, pldEpsilon, parseEvent, calibrateGaussian, type DpEvent, type PrivacyGuarantee } from 'dpfit/accounting';
      import { gaussianMechanism, laplaceMechanism, seededRng, type Rng } from 'dpfit/mechanisms';
      import { logSumExp, lbfgs } from 'dpfit/math';
      import { parseCsv, parseSchema, syntheticDataset, type Dataset } from 'dpfit/data';
      import { train, trainDpSgd, verifyModel, type LinearModel } from 'dpfit/learners';
      import { loadDataset, DpfitError, type TrainOptions } from 'dpfit';
      const event: DpEvent = parseEvent({ kind: 'gaussian', noiseMultiplier: 1.1 });
      const guarantee: PrivacyGuarantee = rdpEpsilon(event, 1e-5);
      const rng: Rng = seededRng(1);
      const released: number = gaussianMechanism(1, { sensitivity: 1, targetEpsilon: 1, delta: 1e-5, rng }).value as number;
      const data: Dataset = syntheticDataset({ n: 10, d: 2, labels: 'logistic', rng });
      const options = {} as TrainOptions;
      export const used = [guarantee.epsilon, pldEpsilon, calibrateGaussian, laplaceMechanism, released, logSumExp, lbfgs, parseCsv,
        parseSchema, data, train, trainDpSgd, verifyModel, loadDataset, DpfitError, options, {} as LinearModel];
    `);
    const variants = [
      { name: 'nodenext', module: 'NodeNext', moduleResolution: 'NodeNext' },
      { name: 'bundler', module: 'ESNext', moduleResolution: 'Bundler' },
      { name: 'node10', module: 'CommonJS', moduleResolution: 'Node10' },
    ];
    for (const variant of variants) {
      const config = `tsconfig.${variant.name}.json`;
      writeFileSync(join(consumer, config), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: variant.module, moduleResolution: variant.moduleResolution, lib: ['ES2022'], types: [], strict: true, skipLibCheck: false, noEmit: true },
        files: ['browser.ts'],
      }));
      const tsc = run(process.execPath, [TSC, '-p', config, '--listFilesOnly']);
      assert.equal(tsc.status, 0, `${variant.name}: ${tsc.stdout}${tsc.stderr}`);
      const checked = run(process.execPath, [TSC, '-p', config]);
      assert.equal(checked.status, 0, `${variant.name}: ${checked.stdout}${checked.stderr}`);
      const loaded = tsc.stdout.split('\n').filter((f) => f.length > 0);
      for (const subpath of BROWSER_SAFE) assert.ok(loaded.some((f) => f.endsWith(`node_modules/dpfit/dist/entries/${subpath}.d.ts`)), `${variant.name} loaded dpfit/${subpath}'s types from the package`);
      assert.ok(loaded.some((f) => f.endsWith('node_modules/dpfit/dist/index.d.ts')), `${variant.name} loaded the root's types`);
      // The root's loadDataset brings data/node/read.d.ts, which names no Node type; nothing else Node-only.
      const node = loaded.filter((f) => /\/@types\/|node_modules\/dpfit\/dist\/(federated|cli|report|audit)\/|node_modules\/dpfit\/dist\/data\/node\/(?!read\.d\.ts)/.test(f));
      assert.deepEqual(node, [], `${variant.name}: Node's types or dpfit's Node-only declarations were loaded`);
    }
    // dpfit/node needs Node's types (Buffer, node:fs, AbortSignal): with them it compiles too.
    writeFileSync(join(consumer, 'node.ts'), "import * as files from 'dpfit/node';\nimport * as root from 'dpfit';\nexport const used = [files.loadDataset === root.loadDataset, files.startNodeServer, files.openSqlEngine];\n");
    writeFileSync(join(consumer, 'tsconfig.node.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')], strict: true, skipLibCheck: false, noEmit: true },
      files: ['node.ts'],
    }));
    const node = run(process.execPath, [TSC, '-p', 'tsconfig.node.json']);
    assert.equal(node.status, 0, `${node.stdout}${node.stderr}`);
  });

  describe('in a browser', { skip: chromiumAvailable() ? false : `${CHROMIUM_PATH} is absent: install Debian's chromium (apt-get install -y chromium) to run the browser part` }, () => {
    let browser: Browser | undefined;
    after(async () => {
      await browser?.close();
    });

    /** Bundles `source` (by default all of `dpfit/<name>`) from the installed package as a browser app would, into one IIFE. */
    async function bundle(name: string, source = `export * from 'dpfit/${name}';\n`): Promise<{ code: string; inputs: string[] }> {
      writeFileSync(join(consumer, `${name}-entry.js`), source);
      const result = await build({
        entryPoints: [`${name}-entry.js`],
        absWorkingDir: consumer,
        bundle: true,
        platform: 'browser',
        format: 'iife',
        globalName: 'dpfitBundle',
        target: 'es2022',
        write: false,
        metafile: true,
        logLevel: 'silent',
        external: [],
      });
      const inputs = Object.keys(result.metafile.inputs);
      for (const [input, { imports }] of Object.entries(result.metafile.inputs)) {
        for (const imported of imports) assert.ok(!imported.external && !isBuiltin(imported.original ?? imported.path), `${input} imports ${imported.original ?? imported.path}`);
      }
      return { code: result.outputFiles[0].text, inputs };
    }

    it('esbuild bundles every browser-safe subpath from the package for the browser, from dpfit\'s dist and @stdlib only', async (t) => {
      if (skipped(t)) return;
      for (const subpath of BROWSER_SAFE) {
        const { code, inputs } = await bundle(subpath);
        assert.ok(inputs.includes(`node_modules/dpfit/dist/entries/${subpath}.js`), `dpfit/${subpath} resolved to the package's entry`);
        for (const input of inputs) assert.match(input, new RegExp(`^(${subpath}-entry\\.js|node_modules/dpfit/dist/|node_modules/@stdlib/)`), `dpfit/${subpath}'s bundle holds ${input}`);
        assert.doesNotMatch(code, /\brequire\(|["']node:/, `dpfit/${subpath}'s bundle loads nothing at run time`);
      }
    });

    it("dpfit/accounting's bundle computes in Chromium the epsilon the installed CLI prints, by RDP and by PLD", async (t) => {
      if (skipped(t)) return;
      const { code } = await bundle('accounting');
      browser = await launchChromium({ width: 800, height: 600 });
      await browser.page.goto('about:blank');
      await browser.page.addScriptTag({ content: code });
      const cases = [
        { event: { kind: 'gaussian', noiseMultiplier: 1.1 }, delta: 1e-5 },
        // DP-SGD: 1000 steps of the Poisson-subsampled Gaussian.
        { event: { kind: 'selfCompose', count: 1000, event: { kind: 'poissonSampled', samplingProbability: 0.01, event: { kind: 'gaussian', noiseMultiplier: 1.1 } } }, delta: 1e-5 },
        { event: { kind: 'compose', events: [{ kind: 'laplace', noiseMultiplier: 4 }, { kind: 'randomizedResponse', noiseParameter: 0.25, numBuckets: 2 }] }, delta: 1e-6 },
      ];
      const onPage = await browser.page.evaluate((list) => {
        const dpfit = (globalThis as unknown as { dpfitBundle: Record<string, (...args: unknown[]) => { epsilon: number }> }).dpfitBundle;
        return list.map(({ event, delta }) => ({
          rdp: dpfit.rdpEpsilon(dpfit.parseEvent(JSON.stringify(event)), delta).epsilon,
          pld: dpfit.pldEpsilon(dpfit.parseEvent(JSON.stringify(event)), delta).epsilon,
        }));
      }, cases);
      const cli = join(consumer, 'node_modules', 'dpfit', 'bin', 'dpfit.js');
      for (const [i, { event, delta }] of cases.entries()) {
        for (const accountant of ['rdp', 'pld'] as const) {
          const printed = run(process.execPath, [cli, 'epsilon', '--event', JSON.stringify(event), '--delta', String(delta), '--accountant', accountant, '--json']);
          assert.equal(printed.status, 0, printed.stderr);
          const expected = (JSON.parse(printed.stdout) as { epsilon: number }).epsilon;
          const got = onPage[i][accountant];
          assert.ok(Number.isFinite(expected) && expected > 0);
          // The same functions on the same doubles; Chromium's V8 and Node's may differ by one ulp
          // in Math.exp (test/web/calculator-browser.test.ts), hence 1e-9 relative.
          assert.ok(Math.abs(got - expected) <= 1e-9 * expected, `${JSON.stringify(event)} by ${accountant}: browser ${got}, CLI ${expected}`);
        }
      }
    });

    it('dpfit/learners trains in Chromium: DP-GD on synthetic data releases the event and (to rounding) the model Node releases', async (t) => {
      if (skipped(t)) return;
      const source = "export { trainDpGd } from 'dpfit/learners';\nexport { syntheticDataset } from 'dpfit/data';\nexport { seededRng } from 'dpfit/mechanisms';\n";
      const { code } = await bundle('learners-app', source);
      // Seeded generators: the same draws in both engines (a seeded run is an experiment, not a release).
      const script = `
        const data = dpfit.syntheticDataset({ n: 400, d: 3, labels: 'logistic', rng: dpfit.seededRng(7) });
        const { model, privacy } = dpfit.trainDpGd(data, { loss: 'logistic', epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 50, learningRate: 0.5, rng: dpfit.seededRng(3) });
        return { theta: Array.from(model.theta), epsilon: privacy.epsilon, event: privacy.event };`;
      browser ??= await launchChromium({ width: 800, height: 600 });
      await browser.page.goto('about:blank');
      await browser.page.addScriptTag({ content: code });
      type Run = { theta: number[]; epsilon: number; event: unknown };
      const inPage = (await browser.page.evaluate(`(() => { const dpfit = globalThis.dpfitBundle; ${script} })()`)) as Run;
      const esm = `import * as learners from 'dpfit/learners'; import * as data from 'dpfit/data'; import * as mechanisms from 'dpfit/mechanisms';
        const dpfit = { ...learners, ...data, ...mechanisms };
        process.stdout.write(JSON.stringify((() => { ${script} })()));`;
      const node = run(process.execPath, ['--input-type=module', '-e', esm]);
      assert.equal(node.status, 0, node.stderr);
      const inNode = JSON.parse(node.stdout) as Run;
      assert.equal(inPage.theta.length, 3);
      assert.deepEqual(inPage.event, inNode.event);
      assert.equal(inPage.epsilon, inNode.epsilon);
      // The noise is exact discrete noise on a grid; only a one-ulp Math.exp difference in the
      // gradients could move a value by one grid step (2^-14 of the sensitivity at most).
      for (const [i, value] of inPage.theta.entries()) assert.ok(Math.abs(value - inNode.theta[i]) <= 1e-3, `theta[${i}]: browser ${value}, Node ${inNode.theta[i]}`);
    });
  });
});
