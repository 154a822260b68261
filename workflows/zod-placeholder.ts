/**
 * What `zod` is inside the workflow sandbox: the worker's bundle resolves `zod` to this module
 * (worker/workflow-bundle.ts). Workflows import domain modules for their pure functions and
 * constants, and those modules also declare the API's validation schemas. In the reusable V8
 * context every workflow evaluates the modules it imports for itself, so each cached workflow
 * carried its own ~470 zod schemas and ~10,000 bound methods: three quarters of its heap
 * (docs/benchmarks.md, "Tenth pass"). Validation belongs at the edges (the API, activities);
 * here a schema is one shared, inert placeholder that any builder call returns, and anything
 * else done with it (parse, shape, options, ...) throws, so a workflow that needs one fails
 * loudly in its first test instead of validating nothing.
 */

/** The builder methods the domain's schemas are declared with (a new one fails at load, in every workflow test). */
const BUILDERS = new Set([
  'array',
  'boolean',
  'datetime',
  'default',
  'describe',
  'discriminatedUnion',
  'enum',
  'int',
  'literal',
  'max',
  'min',
  'nullable',
  'number',
  'object',
  'omit',
  'optional',
  'record',
  'refine',
  'regex',
  'strict',
  'string',
  'superRefine',
  'trim',
  'union',
  'unknown',
  'url',
]);

const placeholder: unknown = new Proxy(function zodPlaceholder() {}, {
  get(_target, prop) {
    if (typeof prop === 'symbol') return undefined;
    if (BUILDERS.has(prop)) return () => placeholder;
    throw new Error(
      `zod is not available in workflow code (${prop} of a schema was used): validate in the API or an activity`,
    );
  },
  apply: () => placeholder,
});

/** Typed as zod's own `z`: what the domain modules import, as far as the compiler is concerned. */
export const z = placeholder as typeof import('zod').z;
