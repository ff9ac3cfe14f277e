/**
 * Starting a worker thread from a module beside the caller, whether dpfit runs compiled (dist/,
 * .js files) or from its TypeScript sources (`node --import tsx`: workers do not inherit --import
 * hooks, so a small bootstrap registers tsx inside the worker first). Node-only.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `moduleUrl` without extension, e.g. new URL('./audit-worker', import.meta.url). */
export function startModuleWorker(moduleUrl: URL, options: WorkerOptions = {}): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`${moduleUrl.href}.js`), options);
  const entry = `${moduleUrl.href}.ts`;
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
