// ESLint for every TypeScript and JavaScript file of the repository, with type information from the
// tsconfig nearest to each file (tsconfig.json, gateway/admin/tsconfig.json). Formatting is
// Prettier's (prettier.config.mjs): eslint-config-prettier, last, turns off the rules it owns.
// The last blocks are the layering of the top-level folders, as import boundaries.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import graphqlPlugin from '@graphql-eslint/eslint-plugin';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import jest from 'eslint-plugin-jest';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TEST_FILES = ['**/*.test.ts', 'test/**'];
// What the JavaScript and TypeScript rules read; the subgraphs' SDL has rules of its own (last block but the boundaries).
const CODE = ['**/*.{ts,tsx,mts,cts,js,mjs,cjs}'];
// Folders outside the layering: they start, check, measure and test the whole system.
const TOOLING = ['test', 'bench', 'scripts', 'schema'];
// Kafka behind one adapter (STYLE.md 10): only this folder imports kafkajs, so the client can be swapped.
const KAFKA_ADAPTER = 'platform/events/kafka/**';

// Modules some files may not import, and why (the import boundaries below).
const KAFKAJS = { module: 'kafkajs', message: 'Only the Kafka adapter (platform/events/kafka/) imports kafkajs: use the EventBus it implements.' };
const TYPEORM = { module: 'typeorm', message: 'Routes and resolvers call the service; only services and entities use TypeORM.' };
/** no-restricted-imports for the module and its subpaths: a file's last block with the rule sets all of its restrictions. */
const restrictImports = (...restrictions) => [
  'error',
  {
    paths: restrictions.map(({ module, message }) => ({ name: module, message })),
    patterns: restrictions.map(({ module, message }) => ({ group: [`${module}/*`], message })),
  },
];
// The root types say nothing their fields do not (each root field is described).
const ROOT_TYPES = 'ObjectTypeDefinition[name.value=/^(Query|Mutation|Subscription)$/]';
// Entities a subgraph refers to or extends while another owns (and describes) them.
const ENTITIES_OWNED_ELSEWHERE = { analytics: ['Book'], auth: ['User'], order: ['User', 'Book', 'Payment'], payment: ['User', 'Order', 'Book'] };
const SUBGRAPHS = readdirSync(new URL('./subgraphs', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

export default tseslint.config(
  // generated/: GraphQL Code Generator's output (schema/codegen.ts), checked by tsc and `npm run schema:check`.
  { ignores: ['**/node_modules/', '**/dist/', '**/generated/', 'data/', '.cache/', '.tmp/', 'test-results/', 'bench/results/'] },

  { ...js.configs.recommended, files: CODE },
  ...tseslint.configs.strictTypeChecked.map((config) => ({ ...config, files: config.files ?? CODE })),
  {
    files: CODE,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // The base keeps no-floating-promises, no-misused-promises, await-thenable, only-throw-error,
      // no-unnecessary-type-assertion and the no-unsafe-* family. Added to it: bugs the compiler does not see.
      eqeqeq: ['error', 'always', { null: 'ignore' }], // `x == null`: null or undefined
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Numbers and booleans read well in a message; objects, undefined and null do not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => setOpen(false)` as a handler is the arrow's shorthand, not a value someone reads.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true, ignoreVoidReturningFunctions: true }],
      // `const { password: _password, ...fields } = user` is how the code leaves a field out.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // `let x; const made = f(() => x); x = ...`: a closure made before the value reads it later.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // `declare global { namespace Express { ... } }` is how Express's Request is augmented.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // Turned off, each for a pattern the code uses on purpose:
      // - an `async` method that does not await implements a Promise-returning interface (a bus,
      //   an Apollo plugin hook) and turns a throw into a rejection; forgotten awaits are caught by
      //   no-floating-promises instead;
      '@typescript-eslint/require-await': 'off',
      // - DTO, entity and event classes are shapes with decorators for class-validator and TypeORM
      //   and no methods: a plain object of the same shape, or a spread of one, is the intended value;
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
      // - the tsconfig leaves noUncheckedIndexedAccess off, so an indexed read types as always
      //   present and this rule flags exactly the checks that guard it (`match[3] ?? ''`), as well
      //   as the checks on untrusted input whose type is the one it should have.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // - row types say what a column holds, but on MariaDB the driver answers DECIMAL and some
      //   aggregates as strings: the Number() this rule calls unnecessary makes both databases agree;
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // - request headers are the plain object Node hands over: deleting one by name drops it;
      '@typescript-eslint/no-dynamic-delete': 'off',
      // - `rest<Reference[]>(...)` names the type of a JSON answer where the call is, as fetch wrappers do;
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // - input checks match control characters on purpose, to reject them.
      'no-control-regex': 'off',
    },
  },

  // Tests and benchmarks read supertest's `res.body` and parsed JSON, which are `any` by design, and
  // assert on them; a `!` on a value the harness has just made fails it as loudly as an expect would.
  {
    files: [...TEST_FILES, 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // `expect(mock.method)` and patching a prototype take methods off their objects on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },

  // A test that cannot fail because it does not run: no focused or disabled tests reach the main
  // branch. A test skipped because its infrastructure is missing goes through test/skip.ts, the one
  // file allowed to call `.skip`, so each skip is conditional, says what would run it, and is counted
  // per CI run (.ci/summary.js).
  {
    files: TEST_FILES,
    plugins: { jest },
    rules: {
      'jest/no-focused-tests': 'error',
      'jest/no-disabled-tests': 'error',
      'jest/no-identical-title': 'error',
      'jest/valid-expect': 'error',
      // A hook that arranges a suite checks its steps as a test does; a failure there fails the block's tests.
      'jest/no-standalone-expect': ['error', { additionalTestBlockFunctions: ['beforeAll', 'beforeEach', 'itIf'] }],
      'no-restricted-properties': [
        'error',
        ...['describe', 'it', 'test'].map((object) => ({ object, property: 'skip', message: 'Skip through describeIf/itIf (test/skip.ts), which say what would run the test.' })),
        ...['it', 'test'].map((object) => ({ object, property: 'todo', message: 'A test to write is an issue, not a test that passes.' })),
      ],
    },
  },

  // kafkajs's table of error codes (in the adapter) and its consumer group (patched by the bus
  // contract's Kafka fault cases) have no types: a require() with a cast is the typed way in.
  {
    files: [KAFKA_ADAPTER, 'platform/events/bus.contract.test.ts'],
    rules: { '@typescript-eslint/no-require-imports': ['error', { allow: ['^kafkajs/src/'] }] },
  },

  // JavaScript: configuration files and the TypeScript loader of the fault tests, in no tsconfig.
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
  { files: ['**/*.js'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },

  // The admin UI (Preact): hooks by name, whatever package exports them.
  {
    files: ['gateway/admin/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    languageOptions: { globals: globals.browser },
    // useRemote(load, deps) is checked like useEffect: `load` against its dependency list.
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': ['error', { additionalHooks: '^useRemote$' }] },
  },
  // useRemote forwards its caller's dependency list (checked at each call) to its own effect.
  { files: ['gateway/admin/src/hooks.ts'], rules: { 'react-hooks/exhaustive-deps': 'off' } },

  prettier,

  // Each subgraph's SDL, against the subgraph's own schema (graphql-eslint builds a federation
  // subgraph with @apollo/subgraph, so entities count as reachable through `_entities`): names in the
  // usual cases, a description on every type and on every root field, a reason on every deprecation,
  // no type that nothing reaches.
  // The plugin reads one graphql-config for the whole run: a project per subgraph, found by the file linted.
  {
    files: ['subgraphs/*/schema.graphql'],
    languageOptions: {
      parser: graphqlPlugin.parser,
      parserOptions: { graphQLConfig: { projects: Object.fromEntries(SUBGRAPHS.map((name) => [name, { schema: `subgraphs/${name}/schema.graphql` }])) } },
    },
    plugins: { '@graphql-eslint': graphqlPlugin },
    rules: {
      '@graphql-eslint/naming-convention': [
        'error',
        {
          types: 'PascalCase',
          FieldDefinition: 'camelCase',
          InputValueDefinition: 'camelCase',
          Argument: 'camelCase',
          EnumValueDefinition: 'UPPER_CASE',
          allowLeadingUnderscore: false,
          allowTrailingUnderscore: false,
        },
      ],
      '@graphql-eslint/require-description': ['error', { types: true, rootField: true, ignoredSelectors: [ROOT_TYPES] }],
      '@graphql-eslint/require-deprecation-reason': 'error',
      '@graphql-eslint/no-unreachable-types': 'error',
      '@graphql-eslint/known-type-names': 'error',
      '@graphql-eslint/unique-field-definition-names': 'error',
      '@graphql-eslint/unique-enum-value-names': 'error',
    },
  },
  // An entity another subgraph owns is described there: a subgraph that only refers to it or adds a
  // field to it does not describe it again (composition would have to choose between the two).
  ...Object.entries(ENTITIES_OWNED_ELSEWHERE).map(([name, types]) => ({
    files: [`subgraphs/${name}/schema.graphql`],
    rules: {
      '@graphql-eslint/require-description': [
        'error',
        { types: true, rootField: true, ignoredSelectors: [ROOT_TYPES, ...types.map((type) => `ObjectTypeDefinition[name.value=${type}]`)] },
      ],
    },
  })),

  // Production code logs through the one logger and reads its settings from the one config
  // (STYLE.md 7 and 8): platform/run.ts hands process.env to platform/config.ts, nothing else reads it.
  {
    files: ['platform/**', 'rest-compat/**', 'subgraphs/**', 'gateway/**', 'simulators/**'],
    ignores: [...TEST_FILES, 'gateway/admin/**'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['platform/**', 'rest-compat/**', 'subgraphs/**', 'gateway/**', 'simulators/**'],
    ignores: [...TEST_FILES, 'gateway/admin/**', 'platform/config.ts', 'platform/run.ts'],
    rules: { 'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Settings come from loadConfig() (platform/config.ts).' }] },
  },

  // Import boundaries. kafkajs stays in its adapter, tests included. TypeORM stays behind the
  // service: routes and resolvers parse, authorize, call the service and answer (STYLE.md, "Three
  // hops"), tests included.
  { files: ['**/*.{ts,tsx,js,mjs,cjs}'], ignores: [KAFKA_ADAPTER], rules: { 'no-restricted-imports': restrictImports(KAFKAJS) } },
  { files: ['**/routes.ts', '**/resolvers.ts'], rules: { 'no-restricted-imports': restrictImports(KAFKAJS, TYPEORM) } },

  // The layering of production code, lowest first: platform <- rest-compat <- subgraphs/*, gateway;
  // simulators <- platform only. No subgraph imports another, the gateway no subgraph, and nothing
  // in production imports the tooling folders. Each layer imports only those below it, so no cycle
  // between top-level folders can form. Tests and the tooling folders may import anything.
  {
    files: ['**/*.{ts,tsx}'],
    ignores: [...TEST_FILES, ...TOOLING.map((dir) => `${dir}/**`)],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json', '.node'] })],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: 'platform',
              from: ['rest-compat', 'subgraphs', 'gateway', 'simulators', ...TOOLING],
              message: 'platform is the lowest layer: it imports no other folder of the repository.',
            },
            { target: 'rest-compat', from: ['subgraphs', 'gateway', 'simulators', ...TOOLING], message: 'rest-compat imports platform only.' },
            { target: 'gateway', from: ['subgraphs', 'simulators', ...TOOLING], message: 'The gateway imports platform and rest-compat only: it reaches the subgraphs over HTTP.' },
            { target: 'simulators', from: ['rest-compat', 'subgraphs', 'gateway', ...TOOLING], message: 'A simulator imports platform only.' },
            ...SUBGRAPHS.map((name) => ({
              target: `subgraphs/${name}`,
              from: ['subgraphs/index.ts', ...SUBGRAPHS.filter((other) => other !== name).map((other) => `subgraphs/${other}`), 'gateway', 'simulators', ...TOOLING],
              message: 'A subgraph imports platform and rest-compat only: it reaches another service over HTTP or through events.',
            })),
          ],
        },
      ],
    },
  },
);
