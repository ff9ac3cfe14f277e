/**
 * A throw-away PostgreSQL server for tests: `initdb` into a temporary directory, `pg_ctl start`
 * on a free loopback port (socket in the same directory), `stop()` removes everything. Uses
 * Debian's postgresql package (`apt-get install -y postgresql`; the binaries live in
 * /usr/lib/postgresql/<version>/bin). PostgreSQL refuses to run as root: as root the cluster
 * runs as the `postgres` user (runuser). Returns undefined with the reason when it cannot start,
 * so that tests skip with a clear message.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PostgresCluster {
  readonly url: string;
  readonly port: number;
  /** psql against this server (the SQL, and stdin for COPY). */
  psql(sql: string): string;
  stop(): void;
}

/** The directory of initdb/pg_ctl: on PATH, else the newest /usr/lib/postgresql/N/bin. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], 'bin');
  }
  try {
    return execFileSync('sh', ['-c', 'dirname "$(command -v pg_ctl)"'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Starts a cluster, or returns the reason it cannot. */
export async function startPostgres(): Promise<PostgresCluster | string> {
  const bin = binDir();
  if (bin === undefined || !existsSync(join(bin, 'initdb'))) return 'PostgreSQL is not installed (apt-get install -y postgresql)';
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-pg-'));
  const as = (command: string, args: string[]): string[] => (root ? ['runuser', '-u', 'postgres', '--', command, ...args] : [command, ...args]);
  const exec = (argv: string[]): string => execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    if (root) {
      chmodSync(dir, 0o700);
      const ids = exec(['id', '-u', 'postgres']).trim();
      const gid = exec(['id', '-g', 'postgres']).trim();
      chownSync(dir, Number(ids), Number(gid));
    }
    const data = join(dir, 'data');
    exec(as(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']));
    const port = await freePort();
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    exec(as(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']));
    const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
    const stop = (): void => {
      try {
        exec(as(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']));
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    };
    const psql = (sql: string): string => execFileSync('psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql, url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { url, port, psql, stop };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const e = error as { stderr?: string; message?: string };
    return `PostgreSQL could not start: ${(e.stderr ?? e.message ?? String(error)).split('\n').find((l) => l.trim() !== '') ?? ''}`;
  }
}
