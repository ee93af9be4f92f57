// `node --import tsx test/perf/watch-read-ab.ts [events] [repeats]` (under the bench lock): the informers' watch
// reader (controller/state/watchstream.ts) against client-node's Watch, over one local HTTP stream of `events`
// (default 20,000) pod events of about 2.8 KiB each (a pod with
// its managed fields, as an API server sends it), each event parsed, stripped and queued as the Pod informer does
// (delivery.ts, with a handler that does nothing). The two readers alternate, `repeats` (default 4) runs each. A probe runs each
// turn of the event loop and notes the lines handed on and the process's CPU time since the last turn: a row gives
// the most lines in one turn, the worst turn's CPU and the 99th percentile over turns (medians over the runs), and
// the median wall time to drain the stream (`drainMs`), one JSON line per reader. CPU time per turn holds up under load better than wall time.
// The server is a child process, so its writes take no turn of the reader's loop.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { SlicedDelivery, WatchEvents } from '../../controller/state/delivery.ts';
import { stripPod } from '../../controller/state/strip.ts';
import { BoundedWatch } from '../../controller/state/watchstream.ts';
const SERVE = '--serve-watch-events';

/** A pod event as an API server writes it (managed fields, image, env, probes' kin: what strip.ts drops). */
function podEvent(i: number): string {
  const t = '2026-01-01T00:00:00Z';
  const object = {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `web-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      labels: { app: 'web', 'pod-template-hash': 'abc123' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc123', uid: 'rs-1', controller: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: t,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': {} } },
        },
      ],
      creationTimestamp: t,
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/web:1.2.3',
          command: ['/bin/web'],
          args: ['--port=8080', '--verbose'],
          env: [
            { name: 'A', value: 'x'.repeat(40) },
            { name: 'B', value: 'y'.repeat(40) },
          ],
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
          terminationMessagePath: '/dev/termination-log',
          imagePullPolicy: 'IfNotPresent',
          volumeMounts: [{ name: 'token', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
        },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      schedulerName: 'default-scheduler',
      nodeName: `node-${i % 1000}`,
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      volumes: [{ name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }],
    },
    status: {
      phase: 'Running',
      qosClass: 'Burstable',
      podIP: '10.0.0.1',
      hostIP: '10.1.0.1',
      startTime: t,
      conditions: ['PodScheduled', 'Ready', 'Initialized', 'ContainersReady'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: t,
      })),
      containerStatuses: [
        {
          name: 'app',
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/web:1.2.3',
          imageID: `sha256:${'a'.repeat(64)}`,
          containerID: `containerd://${'b'.repeat(64)}`,
          state: { running: { startedAt: t } },
        },
      ],
    },
  };
  return `${JSON.stringify({ type: i % 3 === 0 ? 'ADDED' : 'MODIFIED', object })}\n`;
}

/** The child: serves the whole stream to every request and tells the parent its port. */
function serveEvents(n: number): void {
  const body = Buffer.from(Array.from({ length: n }, (_, i) => podEvent(i)).join(''));
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.send?.({ port: typeof a === 'object' && a ? a.port : 0, bytes: body.length });
  });
}

type Reader = 'client-node' | 'bounded';

interface Run {
  readonly drainMs: number;
  readonly linesMax: number;
  readonly cpuMaxMs: number;
  readonly cpuP99Ms: number;
}

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

/** Notes, each turn of the event loop, the lines handed on and the CPU spent since the turn before. */
class TurnProbe {
  lines = 0;
  private readonly perTurnLines: number[] = [];
  private readonly perTurnCpu: number[] = [];
  private last = process.cpuUsage();
  private on = true;

  constructor() {
    setImmediate(() => this.tick());
  }

  private tick(): void {
    const c = process.cpuUsage();
    this.perTurnCpu.push((c.user + c.system - this.last.user - this.last.system) / 1000);
    this.last = c;
    this.perTurnLines.push(this.lines);
    this.lines = 0;
    if (this.on) setImmediate(() => this.tick());
  }

  stop(): Omit<Run, 'drainMs'> {
    this.on = false;
    return {
      linesMax: Math.max(...this.perTurnLines),
      cpuMaxMs: Math.max(...this.perTurnCpu),
      cpuP99Ms: quantile(this.perTurnCpu, 0.99),
    };
  }
}

async function readOnce(kc: KubeConfig, reader: Reader): Promise<Run> {
  const delivery = new SlicedDelivery((e) => process.stderr.write(`${String(e)}\n`));
  const events = new WatchEvents(delivery, 'Pod', () => {});
  const w =
    reader === 'bounded' ? new BoundedWatch(kc, (b) => process.stderr.write(`${String(b.err)}\n`)) : new Watch(kc);
  const probe = new TurnProbe();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const deliver = (phase: string, obj: unknown): void => {
      probe.lines++;
      events.event(phase, stripPod(obj as never));
    };
    void w.watch('/api/v1/pods', {}, deliver, () => events.end(resolve));
  });
  return { drainMs: performance.now() - t0, ...probe.stop() };
}

const median = (xs: readonly number[]): number => quantile(xs, 0.5);

async function main(n: number, repeats: number): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, [SERVE, String(n)], { execArgv: ['--import', 'tsx'] });
  try {
    const { port, bytes } = await new Promise<{ port: number; bytes: number }>((resolve) =>
      child.once('message', resolve as never),
    );
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const readers: Reader[] = ['client-node', 'bounded'];
    const runs = new Map<Reader, Run[]>(readers.map((r) => [r, []]));
    const loadStart = loadavg()[0]!;
    for (let i = 0; i < repeats; i++)
      for (const r of i % 2 ? [...readers].reverse() : readers) runs.get(r)!.push(await readOnce(kc, r));
    const loadEnd = loadavg()[0]!;
    for (const r of readers) {
      const rs = runs.get(r)!;
      const row = {
        reader: r,
        events: n,
        streamMiB: +(bytes / 2 ** 20).toFixed(1),
        runs: rs.length,
        drainMs: Math.round(median(rs.map((x) => x.drainMs))),
        linesPerTurnMax: median(rs.map((x) => x.linesMax)),
        cpuPerTurnMaxMs: +median(rs.map((x) => x.cpuMaxMs)).toFixed(1),
        cpuPerTurnP99Ms: +median(rs.map((x) => x.cpuP99Ms)).toFixed(1),
        loadStart,
        loadEnd,
      };
      process.stdout.write(`${JSON.stringify(row)}\n`);
    }
  } finally {
    child.kill();
  }
}

if (process.argv.includes(SERVE)) serveEvents(Number(process.argv[process.argv.indexOf(SERVE) + 1]));
else await main(Number(process.argv[2] ?? 20_000), Number(process.argv[3] ?? 4));
