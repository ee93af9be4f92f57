// The solver's input block written where it goes (writer.ts, Block): into a buffer of its own, or straight into
// linear memory that an earlier solve left dirty. Both must hold the same bytes: the sections at their aligned
// offsets, a section's parts back to back, zeros between sections and after the last.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { problemArb } from '../../test/solver/arbitraries.ts';
import { encodeProvision, encodeProvisionSections, type EncodeScratch } from './encode.ts';
import { Block, F64s, Words } from './writer.ts';

const bytes = (...xs: number[]) => Uint8Array.from(xs);

function sample(): { block: Block; offsets: number[] } {
  const block = new Block();
  const offsets = [
    block.add(bytes(1, 2, 3)),
    block.addParts([bytes(4, 5), bytes(6, 7, 8), bytes(9)]),
    block.reserve(5),
    block.add(bytes(10)),
  ];
  return { block, offsets };
}

describe('Block', () => {
  it('puts each section at an 8-byte aligned offset and the parts of one back to back', () => {
    const { block, offsets } = sample();
    expect(offsets).toEqual([0, 8, 16, 24]);
    expect(block.byteLength).toBe(32);
    expect([...block.build()]).toEqual([
      1, 2, 3, 0, 0, 0, 0, 0, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0,
    ]);
  });

  it('writes into memory left dirty the same bytes it builds', () => {
    const { block } = sample();
    const memory = new Uint8Array(block.byteLength + 8).fill(0xee);
    block.writeInto(memory.subarray(4, 4 + block.byteLength));
    expect([...memory.subarray(4, 4 + block.byteLength)]).toEqual([...block.build()]);
    // Nothing outside the block's bytes is touched.
    expect([...memory.subarray(0, 4)]).toEqual([0xee, 0xee, 0xee, 0xee]);
    expect([...memory.subarray(4 + block.byteLength)]).toEqual([0xee, 0xee, 0xee, 0xee]);
  });

  it('copies a section when it is written, so writes made to it after it was added are in the block', () => {
    const block = new Block();
    const header = new Int32Array(2);
    block.add(new Uint8Array(header.buffer));
    header[1] = block.add(bytes(7));
    const out = new Uint8Array(block.byteLength).fill(1);
    block.writeInto(out);
    expect(new Int32Array(out.buffer, 0, 2)[1]).toBe(8);
  });
});

describe("a solver's reused pool writers", () => {
  it('encode blocks byte-identical to those encoded with writers of their own, one solve after another', () => {
    // One pair of writers across every run: a large block leaves words past a smaller one's end.
    const scratch: EncodeScratch = { words: new Words(16), f64: new F64s(16) };
    fc.assert(
      fc.property(problemArb, (input) => {
        const reused = encodeProvisionSections(input, { improve: false, scratch }).block.build();
        const own = encodeProvision(input, { improve: false }).block;
        expect(Buffer.from(reused).equals(Buffer.from(own))).toBe(true);
      }),
      { numRuns: 80 },
    );
  });
});
