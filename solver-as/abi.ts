// The solver ABI: integer constants shared by asc (solver-as/assembly) and tsc (engine/abi).
// Only `export const NAME = <integer literal>` lines belong here.
export const ABI_VERSION = 1;
