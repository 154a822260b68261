/** The benchmarks' command lines: positional arguments, and `--name=value` flags. */

/** The arguments that are not flags, in order. */
export const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));

/** The value of `--name=value`, or undefined when it is not given. */
export const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
