// The benchmark's controller runs with the image's malloc settings, read from deploy/Dockerfile's runtime stage.
import { describe, expect, it } from 'vitest';
import { benchImageEnv, imageMallocEnv } from './image-env.ts';

describe('image malloc env', () => {
  it('reads the runtime stage of the repository Dockerfile', () => {
    expect(imageMallocEnv()).toEqual({ MALLOC_MMAP_THRESHOLD_: '131072' });
  });

  it('takes only the last stage and only MALLOC_ variables', () => {
    const file = [
      'FROM a AS build',
      'ENV MALLOC_ARENA_MAX=2',
      'FROM b',
      'ENV NODE_ENV=production',
      'ENV MALLOC_TRIM_THRESHOLD_=65536',
      '# ENV MALLOC_TOP_PAD_=1',
    ].join('\n');
    expect(imageMallocEnv(file)).toEqual({ MALLOC_TRIM_THRESHOLD_: '65536' });
  });

  it('is left out with BENCH_CONTROLLER_IMAGE_ENV=0 and names the variable on bad input', () => {
    expect(benchImageEnv('0')).toEqual({});
    expect(benchImageEnv('1')).toEqual(imageMallocEnv());
    expect(() => benchImageEnv('yes')).toThrow(/BENCH_CONTROLLER_IMAGE_ENV must be 0 or 1, got "yes"/);
  });
});
