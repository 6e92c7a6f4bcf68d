import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Env for startApp that selects the S3 driver against this server. */
  env: Record<string, string>;
  /** The same as a parsed config section. */
  config: {
    bucket: string;
    endpoint: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    forcePathStyle: boolean;
  };
  stop(): Promise<void>;
}

const CHILD = `
const S3rver = require('s3rver');
const [directory, bucket] = process.argv.slice(1);
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  .run().then(({ port }) => process.stdout.write(port + '\\n'));
`;

/**
 * A real S3-compatible server (s3rver) on a random port with a temp directory and one bucket;
 * in this process, or in a child process (`separate`) so its memory is not counted as ours.
 */
export async function startS3(opts: { separate?: boolean } = {}): Promise<TestS3> {
  const directory = mkdtempSync(path.join(tmpdir(), 'plinth-s3rver-'));
  const bucket = 'plinth-test';
  let port: number;
  let stopServer: () => Promise<void>;
  if (opts.separate) {
    const child = spawn(process.execPath, ['-e', CHILD, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    port = Number(line.toString().trim());
    stopServer = async () => {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    };
  } else {
    const server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }],
    });
    ({ port } = await server.run());
    stopServer = async () => {
      server.httpServer.closeAllConnections();
      await server.close();
    };
  }
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's built-in account.
  const config = {
    bucket,
    endpoint,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  };
  return {
    endpoint,
    bucket,
    config,
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async stop() {
      await stopServer();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
