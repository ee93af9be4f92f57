import { describe, expect, it } from 'vitest';
import { LAST_APPLIED, redact } from './redact.ts';

const container = (name: string) => ({
  name,
  image: 'app:1',
  command: ['/app', '--db-password=hunter2'],
  args: ['--token', 's3cr3t'],
  env: [
    { name: 'PASSWORD', value: 'hunter2' },
    { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
  ],
  envFrom: [{ secretRef: { name: 'db' } }],
  resources: { requests: { cpu: '1', memory: '1Gi' } },
});

const podSpec = () => ({
  containers: [container('app')],
  initContainers: [container('init')],
  ephemeralContainers: [container('debug')],
  volumes: [
    { name: 'creds', secret: { secretName: 'db', items: [{ key: 'password', path: 'pw' }] } },
    {
      name: 'proj',
      projected: {
        sources: [{ secret: { name: 'db', items: [{ key: 'token', path: 't' }] } }, { configMap: { name: 'cm' } }],
      },
    },
    { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
  ],
  nodeSelector: { team: 'a' },
});

const meta = () => ({
  name: 'x',
  namespace: 'default',
  labels: { app: 'x' },
  managedFields: [{ manager: 'kubectl' }],
  annotations: { [LAST_APPLIED]: '{"env":"hunter2"}', keep: 'me' },
});

describe('redact', () => {
  it('keeps env names and valueFrom references, drops values, command, args, secret items, managedFields and last-applied', () => {
    const pod = redact('Pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta(),
      spec: podSpec(),
      status: { phase: 'Running' },
    });
    expect(JSON.stringify(pod)).not.toMatch(/hunter2|s3cr3t|managedFields|last-applied|"items"/);
    const spec = pod['spec'] as ReturnType<typeof podSpec>;
    for (const c of [...spec.containers, ...spec.initContainers, ...spec.ephemeralContainers]) {
      expect(c.env).toEqual([
        { name: 'PASSWORD' },
        { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      ]);
      expect(c).toMatchObject({
        image: 'app:1',
        envFrom: [{ secretRef: { name: 'db' } }],
        resources: { requests: { cpu: '1', memory: '1Gi' } },
      });
      expect(c).not.toHaveProperty('command');
      expect(c).not.toHaveProperty('args');
    }
    expect(spec.volumes).toEqual([
      { name: 'creds', secret: { secretName: 'db' } },
      { name: 'proj', projected: { sources: [{ secret: { name: 'db' } }, { configMap: { name: 'cm' } }] } },
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
    ]);
    expect(pod['metadata']).toEqual({
      name: 'x',
      namespace: 'default',
      labels: { app: 'x' },
      annotations: { keep: 'me' },
    });
    expect(pod['status']).toEqual({ phase: 'Running' });
  });

  it("does the same to a DaemonSet's pod template, drops an EC2NodeClass's userData, and an emptied annotation map", () => {
    const ds = redact('DaemonSet', {
      kind: 'DaemonSet',
      metadata: meta(),
      spec: { selector: {}, template: { metadata: { labels: { app: 'x' } }, spec: podSpec() } },
    });
    expect(JSON.stringify(ds)).not.toMatch(/hunter2|s3cr3t|"items"/);
    const nc = redact('EC2NodeClass', {
      kind: 'EC2NodeClass',
      metadata: { name: 'default', annotations: { [LAST_APPLIED]: '{}' } },
      spec: { amiFamily: 'AL2023', userData: 'TOKEN=abc' },
    });
    expect(nc).toEqual({ kind: 'EC2NodeClass', metadata: { name: 'default' }, spec: { amiFamily: 'AL2023' } });
    const node = redact('Node', {
      kind: 'Node',
      metadata: { name: 'n', managedFields: [] },
      spec: { providerID: 'aws:///a/i-1' },
    });
    expect(node).toEqual({ kind: 'Node', metadata: { name: 'n' }, spec: { providerID: 'aws:///a/i-1' } });
  });
});
