// The AWS provider's public surface: createCloudProvider for the controller's composition root, and the parts it is built from.
export { awsCloudProvider, type AwsCloudProvider, type AwsCloudProviderDeps } from './provider.ts';
export { awsClients, sdkPorts, pricingRegion, type AwsClients, type ClientOptions } from './sdk-clients.ts';
export type { AwsPorts, Ec2Port, IamPort, PricingPort, SqsPort, SsmPort } from './sdk.ts';
export { validateSettings, systemClock, type AwsSettings, type Clock } from './settings.ts';
export { reconcileNodeClass, type NodeClassReconcileResult } from './nodeclass/reconcile.ts';
export { isReady as isNodeClassReady } from './nodeclass/conditions.ts';
export {
  parseNodeClass,
  mustParseNodeClass,
  statusObject,
  observedGeneration,
  type NodeClassCondition,
} from './nodeclass/object.ts';
export { EC2NODECLASS_HASH_VERSION, nodeClassHash } from './hash.ts';
export { UnavailableOfferings } from './ice-cache.ts';
export { SqsInterruptionSource } from './interruption/sqs.ts';
export { parseMessage } from './interruption/registry.ts';
export { interruptionMetrics, type InterruptionMetrics } from './interruption/metrics.ts';
export { parseProviderID } from './instance.ts';
export type { StaticPrices } from './pricing.ts';
export { catalogExtraFacts, catalogStaticPrices } from './catalog.ts';
export type { ExtraFacts, ExtraFactsLookup } from './instancetype/facts.ts';
export type { Timers } from './periodic.ts';
export {
  createCloudProvider,
  awsProviderFactory,
  awsSettingsOf,
  kubernetesVersionOf,
  type AwsProviderHandle,
} from './factory.ts';
export { awsNodeClasses, type AwsNodeClasses } from './nodeclasses.ts';
export { resolveRegion } from './region.ts';
