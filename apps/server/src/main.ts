/**
 * @module main
 * `sluice serve [--config FILE]`: load the configuration (reporting every problem at once), start the enabled
 * roles, and stop gracefully on SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import { formatConfigIssues, loadConfig } from '@sluice/config';
import { loadAccessGate } from './access-setup.js';
import { parseCliArgs, USAGE } from './cli-args.js';
import { stopWithin } from './bounded-stop.js';
import { startServer } from './start-server.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Runs the CLI. Resolves with an exit code for commands that finish, or `undefined` while the server runs
 * (the process then exits after a signal-driven graceful stop).
 */
export async function main(argv: readonly string[]): Promise<number | undefined> {
  const command = parseCliArgs(argv);
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`sluice ${version()}\n`);
      return 0;
    case 'usage_error':
      process.stderr.write(`sluice: ${command.message}\n\n${USAGE}`);
      return 2;
    case 'serve':
      break;
  }
  const loaded = await loadConfig({
    ...(command.configPath !== null ? { configPath: command.configPath } : {}),
    env: process.env,
  });
  if (!loaded.ok) {
    process.stderr.write(`sluice: invalid configuration\n${formatConfigIssues(loaded.error)}\n`);
    return 2;
  }
  // The token document is configuration too: its problems are reported the same way, all at once.
  const access = await loadAccessGate(loaded.value);
  if (!access.ok) {
    process.stderr.write(`sluice: invalid configuration\n${formatConfigIssues(access.error)}\n`);
    return 2;
  }
  const server = await startServer(loaded.value, version(), { access: access.value });
  const timeoutSecs = loaded.value.server.shutdownTimeoutSecs;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    server.log.info('shutting down', { signal, shutdown_timeout_secs: timeoutSecs });
    void stopWithin(server, timeoutSecs * 1000).then((outcome) => {
      switch (outcome.status) {
        case 'stopped':
          server.log.info('stopped', { ms: outcome.ms });
          process.exit(0);
          break;
        case 'abandoned':
          // Abandoning loses nothing acknowledged: what is not in object storage is in the WAL (replayed at start).
          server.log.warn('shutdown timed out; unfinished work abandoned', {
            shutdown_timeout_secs: timeoutSecs,
            stopping: outcome.stage,
            wal_not_yet_stored:
              outcome.walUnstored === null
                ? null
                : {
                    durable: outcome.walUnstored.walDurable,
                    stored_through: outcome.walUnstored.sinkCheckpoint,
                    note: 'acknowledged and in the WAL; replayed into object storage at the next start',
                  },
          });
          process.exit(1);
          break;
        case 'failed':
          server.log.error('shutdown failed', {
            error: outcome.error instanceof Error ? outcome.error.message : String(outcome.error),
          });
          process.exit(1);
          break;
      }
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return undefined;
}
