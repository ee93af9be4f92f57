// What every controller is built from (main.ts assembles it once).
import type { ClusterDecisions, EngineOptions } from '../../engine/index.ts';
import type { CloudProvider } from '../cloudprovider/types.ts';
import type { Activity } from '../operator/activity.ts';
import type { Clock } from '../operator/clock.ts';
import type { Recorder } from '../operator/events.ts';
import type { KubeClient } from '../operator/kube.ts';
import type { Logger } from '../operator/logger.ts';
import type { Metrics } from '../operator/metrics.ts';
import type { ResolvedOptions } from '../operator/options.ts';
import type { Cluster } from '../state/cluster.ts';

export interface ControllerContext {
  readonly clock: Clock;
  readonly kube: KubeClient;
  readonly cluster: Cluster;
  /** Already decorated (metrics, ...). */
  readonly cloudProvider: CloudProvider;
  readonly events: Recorder;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly options: ResolvedOptions;
  readonly engineOptions: EngineOptions;
  readonly activity: Activity;
  /** The engine's decisions over this controller's warm model of the cluster (on the engine's workers). */
  readonly engine: ClusterDecisions;
}
