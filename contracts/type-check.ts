/**
 * The compile-time check that ties a schema to the plain type domain/ declares for what it
 * parses: domain/ and workflows/ use the plain type and never load zod, the edges validate with
 * the schema, and the two cannot drift apart. `sameType<z.output<typeof s>, T>(true)` compiles
 * only when the schema's type and T are one type (the compiler's identity check, stricter than
 * assignability both ways: an extra optional field or a lost `readonly` fails it too).
 */
export type SameType<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export function sameType<A, B>(_proof: SameType<A, B>): void {}
