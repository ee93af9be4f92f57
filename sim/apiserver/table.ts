// meta.k8s.io/v1 Table responses (what `kubectl get` asks for with Accept: ...;as=Table).
import { humanAge } from './columns.ts';
import type { ResourceInfo } from './resources.ts';
import type { JsonObject, KObject } from './types.ts';

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /(^|[;,\s])as=Table([;,\s]|$)/.test(accept);
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function toTable(
  r: ResourceInfo,
  objects: readonly KObject[],
  now: number,
  resourceVersion: string,
  include: IncludeObject = 'Metadata',
): JsonObject {
  // A kind whose columns name the object themselves (events) gets no leading Name column.
  const named = !r.columns.some((c) => c.name === 'Name');
  const columnDefinitions = [
    ...(named
      ? [
          {
            name: 'Name',
            type: 'string',
            format: 'name',
            description: 'Name must be unique within a namespace.',
            priority: 0,
          },
        ]
      : []),
    ...(r.columns.length ? r.columns : [{ name: 'Age', type: 'date', priority: 0 }]).map((c) => ({
      name: c.name,
      type: c.type,
      format: c.name === 'Name' ? 'name' : '',
      description: '',
      priority: c.priority ?? 0,
    })),
  ];
  const rows = objects.map((o) => ({
    cells: [
      ...(named ? [o.metadata.name ?? ''] : []),
      ...(r.columns.length ? r.columns.map((c) => c.cell(o, now)) : [humanAge(o, now)]),
    ],
    ...(include === 'None'
      ? {}
      : {
          object:
            include === 'Object'
              ? o
              : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
        }),
  }));
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion }, columnDefinitions, rows };
}
