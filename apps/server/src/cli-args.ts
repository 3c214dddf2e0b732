/**
 * @module cli-args
 * Parses `sluice <command> [--config FILE]`.
 */

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

/** Parses argv (without the node and script paths). */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (argv.includes('--version')) return { kind: 'version' };
  const [command, ...rest] = argv;
  if (command === undefined) return { kind: 'usage_error', message: 'missing command' };
  if (command !== 'serve') return { kind: 'usage_error', message: `unknown command '${command}'` };
  let configPath: string | null = null;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--config') {
      const value = rest[++i];
      if (value === undefined) return { kind: 'usage_error', message: '--config needs a file path' };
      configPath = value;
    } else if (arg.startsWith('--config=')) {
      configPath = arg.slice('--config='.length);
    } else {
      return { kind: 'usage_error', message: `unknown argument '${arg}'` };
    }
  }
  return { kind: 'serve', configPath };
}
