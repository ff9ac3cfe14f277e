/**
 * End to end against Opacus: DP-SGD on UCI Adult's encoded rows (or an Adult-shaped
 * synthetic set, as `bench/dpsgd.ts`), logistic regression without a separate bias (the schema's
 * bias column), batch 256 by Poisson sampling, clip norm 1, noise multiplier 1, learning rate 1,
 * 3 epochs: dpfit's `trainDpSgd` in-process next to Opacus' PrivacyEngine on a torch
 * `nn.Linear` (float64, 1 torch thread), both timed from the first step to the last (dpfit's
 * time includes its noise on the grid and its accounting; Opacus' its accountant's bookkeeping).
 * Runs only when python3 imports torch and opacus; prints why it skipped otherwise (pip cannot
 * install them here). Rounds alternate, medians.
 *
 * `npm run bench -- opacus`, or standalone: `node --import tsx bench/opacus.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { adultData } from './dpsgd.js';
import { median, runPythonReference, startPythonSession } from './reference.js';
import { trainDpSgd } from '../src/learners/gradient/dp-sgd.js';
import { seededRng } from '../src/random/rng.js';

const EPOCHS = 3;
const BATCH = 256;
const ROUNDS = 3;

const OPACUS = (dir: string, n: number, d: number) => `
import sys, time, warnings
warnings.filterwarnings('ignore')
import numpy as np, torch, opacus
from opacus import PrivacyEngine
torch.set_num_threads(1)
x = torch.from_numpy(np.fromfile('${join(dir, 'x.f64')}', dtype=np.float64).reshape(${n}, ${d}))
y = torch.from_numpy(np.fromfile('${join(dir, 'y.f64')}', dtype=np.float64))
def run():
    model = torch.nn.Linear(${d}, 1, bias=False).double()
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=${BATCH})
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=True)
    loss = torch.nn.BCEWithLogitsLoss()
    start = time.perf_counter()
    for _ in range(${EPOCHS}):
        for xb, yb in loader:
            optimizer.zero_grad()
            if len(xb) > 0:
                loss(model(xb).squeeze(-1), yb).backward()
            optimizer.step()
    return (time.perf_counter() - start) * 1000
run()
print(f'torch {torch.__version__} opacus {opacus.__version__}')
for line in sys.stdin:
    print(' '.join(str(run()) for _ in range(int(line))))
`;

export async function runOpacusBench(): Promise<void> {
  const probe = runPythonReference('import torch, opacus\nprint(1)', 60_000);
  if (probe === undefined) {
    process.stdout.write('Opacus end to end: skipped (python3 cannot import torch and opacus)\n');
    return;
  }
  const { data, source } = await adultData();
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-opacus-'));
  try {
    writeFileSync(join(dir, 'x.f64'), new Uint8Array(data.x.buffer, data.x.byteOffset, data.x.byteLength));
    writeFileSync(join(dir, 'y.f64'), new Uint8Array(data.y.buffer, data.y.byteOffset, data.y.byteLength));
    const session = await startPythonSession(OPACUS(dir, data.n, data.d), 1_800_000);
    if (session === undefined) {
      process.stdout.write('Opacus end to end: skipped (the Opacus script failed to start)\n');
      return;
    }
    const dpfitMs: number[] = [];
    const opacusMs: number[] = [];
    const options = { clipNorm: 1, batchSize: BATCH, epochs: EPOCHS, learningRate: 1, noiseMultiplier: 1, delta: 1e-5 };
    try {
      trainDpSgd(data, { ...options, rng: seededRng(1) });
      for (let r = 0; r < ROUNDS; r++) {
        const start = performance.now();
        trainDpSgd(data, { ...options, rng: seededRng(r + 2) });
        dpfitMs.push(performance.now() - start);
        opacusMs.push(...(await session.ask('1')));
      }
    } finally {
      session.close();
    }
    const ours = median(dpfitMs);
    const theirs = median(opacusMs);
    process.stdout.write(`DP-SGD end to end, ${EPOCHS} epochs, batch ${BATCH}, ${data.n} x ${data.d} (${source}); ${session.banner}, 1 thread\n`);
    process.stdout.write(`  Opacus ${theirs.toFixed(0)} ms, dpfit ${ours.toFixed(0)} ms (medians of ${ROUNDS}): dpfit ${(theirs / ours).toFixed(2)}x faster\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runOpacusBench();
