import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.sluice/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  // Type-aware rules on the shipped parts: a promise nobody awaits loses its error, and a switch
  // over a union must say what it does with every member (a `default` counts as saying so).
  {
    files: ['functions/**/*.ts', 'lib/**/*.ts', 'bin/**/*.ts', 'dev/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  // The parts and what each may import (ARCHITECTURE.md): functions (the engine and the Lambda
  // handlers) stands alone; lib (the CDK constructs) and dev (the local components) use functions;
  // bin (the CLI, the demo, the CDK app) uses those three; nothing shipped uses tests or benchmarks.
  ...[
    ['functions', ['lib', 'bin', 'dev', 'test', 'bench']],
    ['lib', ['bin', 'dev', 'test', 'bench']],
    ['dev', ['lib', 'bin', 'test', 'bench']],
    ['bin', ['test', 'bench']],
  ].map(([part, forbidden]) => ({
    files: [`${part}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: forbidden.map((other) => `**/${other}/**`),
              message: `${part}/ never imports ${forbidden.map((other) => `${other}/`).join(', ')} (ARCHITECTURE.md)`,
            },
          ],
        },
      ],
    },
  })),
);
