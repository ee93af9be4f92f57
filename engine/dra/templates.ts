// The devices a new node of an instance type will publish (Karpenter's ResourceSlice templates). An instance
// type carries them explicitly (InstanceType.deviceTemplates: a provider or a test says what its drivers
// publish) or, when it does not, they are derived from the catalog's GPU facts for NVIDIA's DRA driver: one
// device per `nvidia.com/gpu` of capacity, driver gpu.nvidia.com, pool `<instance type>-gpu`, devices gpu-0..n-1
// with the attributes `type` ("gpu") and `index` (int). Nothing else (product names, memory) is claimed, since
// the catalog does not say what the driver would publish for them. docs/solver.md ("DRA").
import type { DeviceTemplate } from '../domain/dra.ts';
import type { InstanceType } from '../domain/types.ts';

export const NVIDIA_DRA_DRIVER = 'gpu.nvidia.com';
const NVIDIA_GPU = 'nvidia.com/gpu';

/** The instance type's device templates (derived ones are built on each call: a solve's DeviceAllocator keeps them per type). */
export function deviceTemplatesOf(it: InstanceType): readonly DeviceTemplate[] {
  if (it.deviceTemplates) return it.deviceTemplates;
  const n = it.capacity[NVIDIA_GPU] ?? 0;
  return n > 0
    ? [
        {
          driver: NVIDIA_DRA_DRIVER,
          pool: `${it.name}-gpu`,
          devices: Array.from({ length: n }, (_, i) => ({
            name: `gpu-${i}`,
            attributes: {
              [`${NVIDIA_DRA_DRIVER}/type`]: { kind: 'string' as const, value: 'gpu' },
              [`${NVIDIA_DRA_DRIVER}/index`]: { kind: 'int' as const, value: i },
            },
            capacity: {},
            allowMultipleAllocations: false,
            consumesCounters: [],
          })),
        },
      ]
    : [];
}
