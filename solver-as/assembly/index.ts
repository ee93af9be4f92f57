import { ABI_VERSION } from '../abi';

/** Called once by the loader after instantiation; it refuses to run a module whose ABI differs. */
export function abiVersion(): i32 {
  return ABI_VERSION;
}
