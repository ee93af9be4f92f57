// Custom catalogs (custom.ts): instance types from plain data, with the requirements scheduling reads, and errors
// that name the entry and the field.
import { describe, expect, it } from 'vitest';
import { customInstanceTypes, CustomCatalogError } from './custom.ts';

describe('custom instance types', () => {
  it("builds capacity, allocatable, labels and the offerings' zones and capacity types as requirements", () => {
    const [t] = customInstanceTypes([
      {
        name: 'bin-100',
        capacity: { cpu: '4', memory: '16Gi', pods: 110, 'example.com/fpga': 1 },
        overhead: { cpu: '100m', memory: '512Mi' },
        labels: { 'kubernetes.io/arch': 'arm64' },
        offerings: [
          { zone: 'zone-a', capacityType: 'spot', price: 0.05 },
          { zone: 'zone-b', capacityType: 'on-demand', price: 0.12, available: false },
        ],
      },
    ]);
    expect(t!.capacity).toMatchObject({ cpu: 4000, memory: 16 * 2 ** 30, pods: 110, 'example.com/fpga': 1 });
    expect(t!.allocatable).toMatchObject({ cpu: 3900, memory: 15.5 * 2 ** 30 });
    expect(t!.offerings).toHaveLength(2);
    const values = (k: string) => [...(t!.requirements.get(k)?.values ?? [])];
    expect(values('kubernetes.io/arch')).toEqual(['arm64']);
    expect(values('node.kubernetes.io/instance-type')).toEqual(['bin-100']);
    // Only available offerings make a zone or capacity type schedulable.
    expect(values('topology.kubernetes.io/zone')).toEqual(['zone-a']);
    expect(values('karpenter.sh/capacity-type')).toEqual(['spot']);
  });

  it('names the entry and the field of bad input', () => {
    const bad = (specs: unknown) => {
      try {
        customInstanceTypes(specs);
      } catch (e) {
        expect(e).toBeInstanceOf(CustomCatalogError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    const offer = [{ zone: 'a', capacityType: 'on-demand', price: 1 }];
    expect(bad({})).toMatch(/must be a list/);
    expect(
      bad([{ name: 'x', capacity: { cpu: '1' }, offerings: [{ zone: 'a', capacityType: 'on-demand', price: -1 }] }]),
    ).toMatch(/instanceTypes\[0\] \(x\)\.offerings\[0\]\.price/);
    expect(
      bad([{ name: 'x', capacity: { cpu: '1' }, offerings: [{ zone: 'a', capacityType: 'cheap', price: 1 }] }]),
    ).toMatch(/offerings\[0\]\.capacityType/);
    expect(bad([{ name: 'x', capacity: { cpu: 'lots' }, offerings: offer }])).toMatch(
      /instanceTypes\[0\] \(x\)\.capacity/,
    );
    expect(bad([{ name: 'x', capacity: { cpu: '1' }, overhead: { cpu: '2' }, offerings: offer }])).toMatch(
      /overhead\.cpu: exceeds the capacity/,
    );
    expect(bad([{ name: 'x', capacity: { cpu: '1' }, offerings: [] }])).toMatch(/offerings: must list at least one/);
    expect(bad([{ capacity: { cpu: '1' }, offerings: offer }])).toMatch(/instanceTypes\[0\]\.name/);
    expect(
      bad([
        { name: 'x', capacity: { cpu: '1' }, offerings: offer },
        { name: 'x', capacity: { cpu: '1' }, offerings: offer },
      ]),
    ).toMatch(/x is listed twice/);
  });
});
