// The engine's public surface: the only module controller/, cli/ and bench/ import.
export * from './domain/types.ts';
export * from './domain/resources.ts';
export * from './domain/quantity.ts';
export * from './catalog/index.ts';
