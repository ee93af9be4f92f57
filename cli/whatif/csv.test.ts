import { describe, expect, it } from 'vitest';
import { csvRows, podsFromCsv } from './csv.ts';

describe('trace CSV', () => {
  it('reads quoted fields, CRLF and blank lines', () => {
    expect(csvRows('a,b\r\n"x,1","say ""hi"""\n\n3,4')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x,1', 'say "hi"'] },
      { line: 4, fields: ['3', '4'] },
    ]);
  });

  it('turns rows into pending pods with requests, labels, node selectors and counts', () => {
    const pods = podsFromCsv(
      'name,namespace,cpu,memory,gpu,count,labels,nodeSelector\nweb,shop,500m,1Gi,,3,app=web;tier=front,kubernetes.io/arch=arm64\ntrain,,4,16Gi,1,,,\n',
      't.csv',
    );
    expect(pods.map((p) => `${p.namespace}/${p.name}`)).toEqual([
      'shop/web-1',
      'shop/web-2',
      'shop/web-3',
      'default/train',
    ]);
    expect(pods[0]!.requests).toMatchObject({ cpu: 500, memory: 2 ** 30, pods: 1 });
    expect(pods[0]!.labels).toEqual({ app: 'web', tier: 'front' });
    expect(pods[0]!.nodeSelector).toEqual({ 'kubernetes.io/arch': 'arm64' });
    expect(pods[3]!.requests['nvidia.com/gpu']).toBe(1);
    expect(pods.every((p) => p.nodeName === undefined)).toBe(true);
  });

  it('names the file, the line and the column of a bad value', () => {
    expect(() => podsFromCsv('cpu,memory\n1,lots\n', 'trace.csv')).toThrow(/^trace\.csv: line 2: memory: .*lots/);
    expect(() => podsFromCsv('cpu,memory,count\n1,1Gi,-2\n', 'trace.csv')).toThrow(
      'trace.csv: line 2: count: "-2" is not a whole number',
    );
    expect(() => podsFromCsv('cpu,memory,labels\n1,1Gi,app\n', 'trace.csv')).toThrow(
      'trace.csv: line 2: labels: "app" is not key=value',
    );
    expect(() => podsFromCsv('cpu\n1\n', 'trace.csv')).toThrow('trace.csv: line 1: the header has no memory column');
    expect(() => podsFromCsv('cpu,memory,colour\n1,1Gi,red\n', 'trace.csv')).toThrow('unknown column "colour"');
    expect(() => podsFromCsv('cpu,memory\n1,1Gi,3\n', 'trace.csv')).toThrow(
      'trace.csv: line 2: 3 fields, the header has 2',
    );
    expect(() => podsFromCsv('name,cpu,memory\na,1,1Gi\na,1,1Gi\n', 'trace.csv')).toThrow(
      'trace.csv: line 3: pod default/a is listed twice',
    );
  });
});
