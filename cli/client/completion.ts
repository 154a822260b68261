import { Argument, type Command, type Option } from 'commander';
import { clientGroup } from './command';

/**
 * `foghorn completion bash|zsh`: a completion script made by walking the commander tree, so it
 * always lists exactly the commands, subcommands, options and option choices the CLI has.
 */

interface Node {
  /** `foghorn incidents list`: the key of everything below. */
  path: string;
  /** Subcommands offered (names, not aliases), with their descriptions. */
  commands: { name: string; description: string }[];
  /** Words that lead to a subcommand (names and aliases) → its name. */
  next: Record<string, string>;
  options: string[];
  /** Option flag → the values it takes. */
  choices: Record<string, string[]>;
}

const isHidden = (c: Command) => (c as unknown as { _hidden?: boolean })._hidden === true;

function walk(command: Command, path: string, nodes: Node[]): void {
  const visible = command.commands.filter((c) => !isHidden(c));
  const options = command.options.filter((o: Option) => !o.hidden);
  const flags = options.flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const choices: Record<string, string[]> = {};
  for (const o of options) if (o.argChoices) for (const f of [o.short, o.long]) if (f) choices[f] = [...o.argChoices];
  nodes.push({
    path,
    commands: visible.map((c) => ({ name: c.name(), description: c.description() })),
    next: Object.fromEntries(visible.flatMap((c) => [c.name(), ...c.aliases()].map((w) => [w, c.name()]))),
    options: [...flags, '-h', '--help'],
    choices,
  });
  for (const c of visible) walk(c, `${path} ${c.name()}`, nodes);
}

/** Single-quoted for bash and zsh. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The tables the scripts look things up in: bash `declare -A x=([k]=v)`, zsh `typeset -A x; x=(k v)`. */
function tables(program: Command, shell: 'bash' | 'zsh'): string {
  const nodes: Node[] = [];
  walk(program, program.name(), nodes);
  type Row = [key: string, value: string];
  const cmds: Row[] = [];
  const descs: Row[] = [];
  const next: Row[] = [];
  const opts: Row[] = [];
  const choices: Row[] = [];
  for (const n of nodes) {
    if (n.commands.length) {
      cmds.push([n.path, n.commands.map((c) => c.name).join(' ')]);
      descs.push([n.path, n.commands.map((c) => `${c.name}:${c.description.replace(/[:\n]/g, ' ')}`).join('\n')]);
    }
    for (const [word, name] of Object.entries(n.next)) next.push([`${n.path} ${word}`, name]);
    opts.push([n.path, n.options.join(' ')]);
    for (const [flag, values] of Object.entries(n.choices)) choices.push([`${n.path}|${flag}`, values.join(' ')]);
  }
  const table = (name: string, rows: Row[]) => {
    const variable = `_${program.name()}_${name}`;
    return shell === 'bash'
      ? `declare -gA ${variable}=(\n${rows.map(([k, v]) => `  [${q(k)}]=${q(v)}`).join('\n')}\n)`
      : `typeset -gA ${variable}\n${variable}=(\n${rows.map(([k, v]) => `  ${q(k)} ${q(v)}`).join('\n')}\n)`;
  };
  return [
    table('cmds', cmds),
    table('descs', descs),
    table('next', next),
    table('opts', opts),
    table('choices', choices),
  ].join('\n');
}

export function bashCompletion(program: Command): string {
  const p = program.name();
  return `# ${p} completion for bash. Load it with:  source <(${p} completion bash)
${tables(program, 'bash')}

_${p}_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path=${q(p)} word i
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    if [[ -n "\${_${p}_next["$path $word"]+set}" ]]; then
      path="$path \${_${p}_next["$path $word"]}"
    fi
  done
  if [[ -n "\${_${p}_choices["$path|$prev"]+set}" ]]; then
    COMPREPLY=( $(compgen -W "\${_${p}_choices["$path|$prev"]}" -- "$cur") )
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "\${_${p}_opts["$path"]}" -- "$cur") )
  elif [[ -n "\${_${p}_cmds["$path"]+set}" ]]; then
    COMPREPLY=( $(compgen -W "\${_${p}_cmds["$path"]}" -- "$cur") )
  else
    COMPREPLY=( $(compgen -f -- "$cur") )
  fi
}
complete -o default -F _${p}_complete ${p}
`;
}

export function zshCompletion(program: Command): string {
  const p = program.name();
  return `#compdef ${p}
# ${p} completion for zsh. Load it with:  source <(${p} completion zsh)
${tables(program, 'zsh')}

_${p}_complete() {
  local cmdpath=${q(p)} word i cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}"
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
    if (( \${+_${p}_next[$cmdpath $word]} )); then
      cmdpath="$cmdpath \${_${p}_next[$cmdpath $word]}"
    fi
  done
  if (( \${+_${p}_choices[$cmdpath|$prev]} )); then
    compadd -- \${=_${p}_choices[$cmdpath|$prev]}
  elif [[ "$cur" == -* ]]; then
    compadd -- \${=_${p}_opts[$cmdpath]}
  elif (( \${+_${p}_descs[$cmdpath]} )); then
    local -a described
    described=( "\${(@f)_${p}_descs[$cmdpath]}" )
    _describe -t commands 'command' described
  else
    _files
  fi
}
compdef _${p}_complete ${p}
`;
}

/** The \`completion\` command; \`root\` is the whole program, walked when the script is asked for. */
export function completionCommand(root: () => Command): Command {
  return clientGroup('completion')
    .description('print a shell completion script (bash or zsh)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(shell === 'bash' ? bashCompletion(root()) : zshCompletion(root()));
    });
}
