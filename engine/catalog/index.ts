// The catalog's public surface (re-exported by engine/index.ts).
export * from './types.ts';
export * from './amifamily.ts';
export * from './allocatable.ts';
export * from './labels.ts';
export { nodeClassCapacitySettings } from './nodeclass.ts';
export {
  ec2InstanceTypes,
  ec2InstanceInfos,
  regionPrices,
  regionsInCatalog,
  regionZones,
  type PriceTable,
} from './catalog.ts';
export type { RegionPrices } from './data.ts';
export {
  adjustedPrice,
  applyOverlays,
  evaluateOverlays,
  overlayAnnotations,
  PRICE_OVERLAY_APPLIED_ANNOTATION,
  type OverlayOutcome,
  type OverlayUpdates,
  type PoolTypes,
} from './overlay.ts';
export {
  customInstanceTypes,
  CustomCatalogError,
} from './custom.ts';
