/**
 * @module cli-args
 * Parses `sluice <command> [--config FILE]` with `node:util`'s `parseArgs`. Parsing is lenient so that every
 * problem becomes our own usage message (exit 2) rather than a library error: `--help`/`-h` and `--version` win
 * wherever they appear, then the command must be `serve` and nothing else may follow it.
 */
import { parseArgs } from 'node:util';

/** Parsed command line. */
export type CliCommand =
  | { readonly kind: 'serve'; readonly configPath: string | null }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'usage_error'; readonly message: string };

/** Usage text printed by `sluice --help` and after a usage error. */
export const USAGE = `Usage: sluice serve [--config FILE]

  serve            run the enabled roles (receiver, querier) in one process
  --config FILE    YAML configuration; without it, configuration comes from SLUICE_* environment variables
  --help           show this help
  --version        print the version
`;

const OPTIONS = {
  config: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** Parses argv (without the node and script paths). */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const { values, tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };
  const [first, ...rest] = tokens;
  if (first === undefined) return { kind: 'usage_error', message: 'missing command' };
  if (first.kind !== 'positional' || first.value !== 'serve') {
    const given = first.kind === 'positional' ? first.value : first.kind === 'option' ? first.rawName : '--';
    return { kind: 'usage_error', message: `unknown command '${given}'` };
  }
  let configPath: string | null = null;
  for (const token of rest) {
    if (token.kind === 'option' && token.name === 'config') {
      // Lenient parsing leaves a value-less `--config` as `undefined`.
      if (token.value === undefined) return { kind: 'usage_error', message: '--config needs a file path' };
      configPath = token.value;
      continue;
    }
    const arg = token.kind === 'positional' ? token.value : token.kind === 'option' ? argv[token.index]! : '--';
    return { kind: 'usage_error', message: `unknown argument '${arg}'` };
  }
  return { kind: 'serve', configPath };
}
