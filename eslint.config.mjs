// Lint that guards what matters (docs/architecture.md, "Layers"): the workflow sandbox, promises that
// are never awaited, and a small type-checked rule set. `npm run lint` also runs scripts/check-layers.ts,
// which checks that imports point down the layers.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Files bundled into the workflow sandbox: the workflows and everything they import at run time. */
const SANDBOX = ['src/workflows/**/*.ts', 'src/context/**/*.ts', 'src/schemas/**/*.ts', 'src/errors.ts', 'src/observability/workflow-interceptors.ts'];

// Node builtins do not exist in the sandbox (Temporal's samples allow only `assert`, which it stubs).
const NODE_BUILTINS = builtinModules.filter((name) => name !== 'assert' && !name.startsWith('_')).flatMap((name) => [name, `node:${name}`]);

const SANDBOX_REASON = 'runs outside the workflow sandbox (I/O, clocks, randomness): call it through an activity; `import type` is fine';

// Packages that do I/O or need Node: a workflow may use their types, never their values.
const IO_PACKAGES = [
  'pg',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '@temporalio/testing',
  'prom-client',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  'tsx',
];
const ioPackages = {
  paths: IO_PACKAGES.map((name) => ({ name, message: `${name} ${SANDBOX_REASON}.`, allowTypeImports: true })),
  patterns: [
    { regex: '^@anthropic-ai/sdk(/.*)?$', message: `The Anthropic SDK ${SANDBOX_REASON}.`, allowTypeImports: true },
    { regex: '^(pg|@temporalio/(client|worker|activity|testing)|@electric-sql/[^/]+)/', message: `This package ${SANDBOX_REASON}.`, allowTypeImports: true },
  ],
};

// The places below the workflows that do I/O: workflows reach them through proxyActivities, by type.
const IO_PLACES = ['activities', 'memory', 'db', 'model', 'desk', 'temporal', 'observability', 'config'];
const ioPlaces = {
  regex: `^(\\.\\./)+(${IO_PLACES.join('|')})(\\.ts)?(/.*)?$`,
  message: `src/activities, memory, db, model, desk, temporal, observability and config ${SANDBOX_REASON}.`,
  allowTypeImports: true,
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.tools/', '.data/', 'test-artifacts/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its error; in a workflow it is a command that may never run.
      // node:test's test(), it() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-deprecated': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // An async implementation of a promise-returning port (Model.create, stop()) is how a throw
      // becomes a rejection; requiring an await there only invites `await undefined`.
      '@typescript-eslint/require-await': 'off',
      // Our factories return objects of closures (createModelActivities, startInProcessWorker,
      // connectClient) whose methods never use `this`; the rule cannot tell them from class methods.
      '@typescript-eslint/unbound-method': 'off',
      'object-shorthand': ['error', 'always'],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests read untyped JSON (HTTP bodies, CLI output, rows) and assert on it: a wrong shape fails
    // the assertion, so the no-unsafe-* family only asks for casts that would prove nothing.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: SANDBOX,
    rules: {
      'no-restricted-imports': ['error', { paths: NODE_BUILTINS.map((name) => ({ name, message: 'Node builtins do not exist in the workflow sandbox.' })) }],
      '@typescript-eslint/no-restricted-imports': ['error', ioPackages],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'process does not exist in the workflow sandbox: pass settings in the workflow input.' },
        { name: 'Buffer', message: 'Buffer does not exist in the workflow sandbox.' },
      ],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { ...ioPackages, patterns: [...ioPackages.patterns, ioPlaces] }],
    },
  },
  {
    // Entry points load each command's module on first use with a typed require(), so
    // `casework worker` never loads the demo or the benches (casework compiles to CommonJS,
    // where import() would turn into an ESM load).
    files: ['src/main/**/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
    },
  },
  {
    // Plain JavaScript (this file, bin/casework's launcher) has no type information to lint with.
    files: ['**/*.{js,mjs,cjs}', 'bin/*'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
