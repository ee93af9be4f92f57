// The engine's public surface: the only module controller/, cli/ and bench/ import.
export * from './domain/types.ts';
export * from './domain/resources.ts';
export * from './domain/quantity.ts';
// Requirement algebra (as a namespace: its add/get/has would collide with resources.ts) and label keys, for
// the controller's cloud providers, which build instance-type requirements and check launch compatibility.
export * as reqs from './scheduling/requirements.ts';
export * from './scheduling/labels.ts';
