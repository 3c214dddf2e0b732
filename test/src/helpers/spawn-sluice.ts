/**
 * @module spawn-sluice
 * Runs the real CLI (`node apps/server/bin/sluice.js serve --config FILE`) as a child process with listeners on
 * 127.0.0.1 port 0, and learns the bound addresses from its startup log lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How long a start or a readiness wait may take before the test fails: generous, because a 2-core machine under a
 * whole suite (or other work) can take tens of seconds to start a process; it only bounds how long a broken build
 * takes to fail. */
const START_TIMEOUT_MS = 120_000;

/** Repository root (test/dist/helpers → ../../..). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
/** The CLI entry point. */
export const SLUICE_BIN = join(REPO_ROOT, 'apps/server/bin/sluice.js');

/** A running gateway process. */
export interface SluiceProcess {
  readonly child: ChildProcess;
  /** e.g. `http://127.0.0.1:40123` */
  readonly otlpHttpUrl: string;
  /** e.g. `127.0.0.1:40124` */
  readonly otlpGrpcAddress: string;
  /** e.g. `http://127.0.0.1:40125`, when the querier role runs. */
  readonly queryUrl: string | null;
  /** Every stderr line so far. */
  readonly logs: string[];
  /** Resolves when the process has exited, with its exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Polls `/readyz` until it answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
}

/** Makes a fresh temporary directory for one test. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `sluice-${prefix}-`));
}

/** Writes `yaml` to a temp file and starts `sluice serve --config` on it. */
export async function spawnSluice(
  yaml: string,
  options: {
    dir?: string;
    env?: NodeJS.ProcessEnv;
    startTimeoutMs?: number;
    /** Runs the process under `ulimit -n <n>` (bash execs node, so the pid is node's). */
    openFileLimit?: number;
  } = {},
): Promise<SluiceProcess> {
  const dir = options.dir ?? tempDir('cfg');
  const configPath = join(dir, `sluice-${process.pid}-${Date.now()}.yaml`);
  writeFileSync(configPath, yaml);
  const args = [SLUICE_BIN, 'serve', '--config', configPath];
  const [command, argv] =
    options.openFileLimit === undefined
      ? [process.execPath, args]
      : ['bash', ['-c', `ulimit -n ${options.openFileLimit} && exec "$0" "$@"`, process.execPath, ...args]];
  const child = spawn(command, argv, {
    cwd: dir,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  );
  let queryUrl: string | null = null;
  const wantQuerier = /querier:\s*\n\s*enabled:\s*true/.test(yaml);
  const wantReceiver = !/receiver:\s*\n\s*enabled:\s*false/.test(yaml);
  let receiverAt: { http: string; grpc: string } | null = wantReceiver ? null : { http: '', grpc: '' };
  const started = new Promise<{ http: string; grpc: string }>((resolveStart, reject) => {
    const check = (): void => {
      if (receiverAt !== null && (!wantQuerier || queryUrl !== null)) resolveStart(receiverAt);
    };
    let pending = '';
    const onData = (chunk: Buffer): void => {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; fields?: { http?: string; grpc?: string } };
          const f = entry.fields;
          if (entry.msg === 'receiver started' && f?.http && f.grpc) receiverAt = { http: f.http, grpc: f.grpc };
          if (entry.msg === 'querier started' && f?.http) queryUrl = `http://${f.http}`;
          check();
        } catch {
          // not a JSON log line
        }
      }
    };
    child.stderr!.on('data', onData);
    child.stdout!.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')));
    void exited.then(({ code, signal }) =>
      reject(new Error(`sluice exited before starting (code ${code}, signal ${signal}):\n${logs.join('\n')}`)),
    );
    setTimeout(
      () => reject(new Error(`sluice did not start in time:\n${logs.join('\n')}`)),
      options.startTimeoutMs ?? START_TIMEOUT_MS,
    ).unref();
  });
  // A start that fails (timed out, or bad logs) must not leave the process behind to load the rest of the suite.
  const addresses = await started.catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  const otlpHttpUrl = addresses.http === '' ? '' : `http://${addresses.http}`;
  const probeUrl = otlpHttpUrl !== '' ? otlpHttpUrl : (queryUrl ?? '');
  return {
    child,
    otlpHttpUrl,
    otlpGrpcAddress: addresses.grpc,
    queryUrl,
    logs,
    exited,
    async waitReady(timeoutMs = START_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          const res = await fetch(`${probeUrl}/readyz`);
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms:\n${logs.join('\n')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
