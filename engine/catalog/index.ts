// The catalog's public surface (re-exported by engine/index.ts).
export * from './types.ts';
export * from './amifamily.ts';
export * from './allocatable.ts';
export * from './labels.ts';
export { nodeClassCapacitySettings, type ControllerSizing } from './nodeclass.ts';
export {
  ec2InstanceTypes,
  ec2InstanceInfos,
  regionPrices,
  regionsInCatalog,
  regionZones,
  type Ec2CatalogOptions,
  type PriceTable,
} from './catalog.ts';
export type { OnDemandPriceSource, RegionPrices } from './data.ts';
export {
  adjustedPrice,
  applyOverlays,
  byWeight,
  CAPACITY_OVERLAY_APPLIED_ANNOTATION,
  evaluateOverlays,
  overlayAnnotations,
  PRICE_OVERLAY_APPLIED_ANNOTATION,
  selectedOfferings,
  type OverlayEvaluation,
  type OverlayOutcome,
  type OverlayUpdates,
  type PoolTypes,
} from './overlay.ts';
export {
  customInstanceTypes,
  CustomCatalogError,
  type CustomInstanceTypeSpec,
  type CustomOfferingSpec,
} from './custom.ts';
