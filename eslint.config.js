import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.sluice/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The layers: functions (the engine and the Lambda handlers) stand alone; lib (the CDK
  // constructs), bin (the CLI, the demo, the CDK app) and dev (the local components) use
  // functions; nothing shipped uses tests or benchmarks.
  {
    files: ['functions/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/lib/**', '**/bin/**', '**/test/**', '**/bench/**'],
              message: 'functions/ is the engine: it never imports lib/, bin/, test/ or bench/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/bin/**', '**/test/**', '**/bench/**'],
              message: 'lib/ (the CDK constructs) never imports bin/, test/ or bench/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['bin/**/*.ts', 'dev/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/test/**', '**/bench/**'],
              message: 'bin/ and dev/ (the CLI, the demo, the local components) never import test/ or bench/',
            },
          ],
        },
      ],
    },
  },
);
