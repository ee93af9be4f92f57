import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CRDS, crdFileName, crdYaml, objectSchema } from './crds.ts';
import { isTransitionRule, type Schema } from './types.ts';

const DIR = join(import.meta.dirname, '..', '..', '..', 'charts', 'karpenter-ts', 'crds');

function walk(s: Schema, visit: (s: Schema, path: string) => void, path = ''): void {
  visit(s, path);
  for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, visit, `${path}.${k}`);
  if (s.additionalProperties) walk(s.additionalProperties, visit, `${path}[*]`);
  if (s.items) walk(s.items, visit, `${path}[]`);
}

describe('generated CRDs', () => {
  for (const def of CRDS) {
    const file = join(DIR, crdFileName(def));

    it(`${crdFileName(def)} is exactly what scripts/gen-crds.ts generates`, () => {
      expect(readFileSync(file, 'utf8')).toBe(crdYaml(def));
    });

    it(`${crdFileName(def)} parses as one CustomResourceDefinition with a status subresource`, () => {
      const docs = parseAllDocuments(readFileSync(file, 'utf8'));
      expect(Array.isArray(docs) && docs.length).toBe(1);
      const crd = (docs as { toJS(): any; errors: unknown[] }[])[0]!;
      expect(crd.errors).toEqual([]);
      const o = crd.toJS();
      expect(o).toMatchObject({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${def.plural}.${def.group}` },
      });
      expect(o.spec.scope).toBe(def.scope);
      expect(o.spec.names).toMatchObject({ kind: def.kind, plural: def.plural, categories: [...def.categories] });
      const [version] = o.spec.versions;
      expect(version).toMatchObject({ name: def.version, served: true, storage: true, subresources: { status: {} } });
      expect(version.schema.openAPIV3Schema.properties.spec.type).toBe('object');
      expect(JSON.stringify(version.schema)).not.toMatch(/"(check|hint|patternHint)"/);
    });
  }

  const columns = (kind: string): string[] => {
    const def = CRDS.find((d) => d.kind === kind)!;
    const o = (parseAllDocuments(readFileSync(join(DIR, crdFileName(def)), 'utf8')) as { toJS(): any }[])[0]!.toJS();
    return o.spec.versions[0].additionalPrinterColumns.filter((c: any) => !c.priority).map((c: any) => c.name);
  };

  it('shows kubectl get nodeclaims columns like Karpenter', () => {
    expect(columns('NodeClaim')).toEqual(['Type', 'Capacity', 'Zone', 'Node', 'Ready', 'Age']);
  });
  it('shows kubectl get nodepools columns like Karpenter', () => {
    expect(columns('NodePool')).toEqual(['NodeClass', 'Nodes', 'Ready', 'Age']);
  });
  it('shows kubectl get ec2nodeclasses columns like Karpenter', () => {
    expect(columns('EC2NodeClass')).toEqual(['Ready', 'Age']);
  });

  it('gives every CEL rule a TypeScript twin and non-empty text', () => {
    let rules = 0;
    for (const def of CRDS) {
      walk(objectSchema(def), (s, path) => {
        for (const r of s.rules ?? []) {
          rules++;
          expect(r.rule.length, `${def.kind}${path}`).toBeGreaterThan(0);
          expect(r.message.length, `${def.kind}${path}`).toBeGreaterThan(0);
          expect(typeof r.check, `${def.kind}${path}: ${r.rule}`).toBe('function');
          if (isTransitionRule(r)) expect(r.rule, `${def.kind}${path}`).toMatch(/oldSelf/);
        }
      });
    }
    expect(rules).toBeGreaterThan(40);
  });

  it('uses patterns that compile and defaults that are valid against their own schema', () => {
    for (const def of CRDS) {
      walk(objectSchema(def), (s, path) => {
        if (s.pattern !== undefined) expect(() => new RegExp(s.pattern!, 'u'), `${def.kind}${path}`).not.toThrow();
        if (s.default !== undefined && s.enum) expect(s.enum, `${def.kind}${path}`).toContain(s.default);
      });
    }
  });
});
